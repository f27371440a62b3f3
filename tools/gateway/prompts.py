"""Prompts whose arguments complete: a category, a model, a knowledge-base document.

- `routed_prompt(category, prompt)`: the prompt under the category's system prompt, as routeCompletion
  would send it.
- `ask_model(model, prompt)`: a request to answer through routeCompletion with that model.
- `ask_about_document(documentId, question)`: the document embedded, then the question (only when a
  knowledge base is served).
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from hexmcp.core import ErrorCode, ProtocolError, models
from hexmcp.core.registrar import Registrar

from .completers import Values, completer
from .routing_source import RoutingSource

DocumentsFn = Callable[[], Mapping[str, Any]]


def register_prompts(registrar: Registrar, routing: RoutingSource | None, category_names: Values, model_names: Values,
                     documents: DocumentsFn | None, document_uri: Callable[[str], str] | None) -> None:
    """ask_model always; routed_prompt with a routing source, ask_about_document with a knowledge base."""
    if routing is not None:
        _register_routed_prompt(registrar, routing, category_names)
    _register_ask_model(registrar, model_names)
    if documents is not None and document_uri is not None:
        _register_ask_about_document(registrar, documents, document_uri)


def _register_routed_prompt(registrar: Registrar, routing: RoutingSource, category_names: Values) -> None:
    @registrar.prompt("routed_prompt", title="A prompt under a category's system prompt",
                      completer=completer({"category": category_names}))
    async def routed_prompt(category: str, prompt: str) -> list[models.PromptMessage]:
        """The prompt preceded by the system prompt of `category`, as routeCompletion sends it."""
        for route in await routing.categories():
            if route.name == category:
                return [_user(f"{route.system_prompt}\n\n{prompt}")]
        raise ProtocolError(ErrorCode.INVALID_PARAMS, f"unknown category {category!r}; one of: "
                            f"{', '.join(await category_names())}", {"path": "$.arguments.category"})


def _register_ask_model(registrar: Registrar, model_names: Values) -> None:
    @registrar.prompt("ask_model", title="Ask one model through the gateway",
                      completer=completer({"model": model_names}))
    async def ask_model(model: str, prompt: str) -> list[models.PromptMessage]:
        """Answer `prompt` by calling the routeCompletion tool with this model."""
        return [_user(f"Call the routeCompletion tool with model {model!r} and this prompt, then report its "
                      f"completion:\n\n{prompt}")]


def _register_ask_about_document(registrar: Registrar, documents: DocumentsFn,
                                 document_uri: Callable[[str], str]) -> None:
    async def document_ids() -> list[str]:
        return sorted(documents())

    @registrar.prompt("ask_about_document", title="A question about one document",
                      completer=completer({"documentId": document_ids}))
    async def ask_about_document(documentId: str, question: str) -> list[models.PromptMessage]:  # noqa: N803
        """The document (embedded), then the question about it."""
        document = documents().get(documentId)
        if document is None:
            raise ProtocolError(ErrorCode.INVALID_PARAMS, f"unknown document id {documentId!r}",
                                {"path": "$.arguments.documentId"})
        embedded = models.EmbeddedResource(resource=models.TextResourceContents(
            uri=document_uri(documentId), text=document.text, mime_type="text/plain"))
        return [models.PromptMessage(role="user", content=embedded), _user(question)]


def _user(text: str) -> models.PromptMessage:
    return models.PromptMessage(role="user", content=models.TextContent(text=text))
