"""A minimal OpenAI-compatible upstream for bench/gateway.py: a raw ASGI app under uvicorn answering
`POST /v1/chat/completions` with one fixed completion (whatever the request) and `GET /v1/models` with two models, at once.
`python -m bench.servers.fake_openai --port P`.
"""

from __future__ import annotations

import argparse
from typing import Any

import orjson
import uvicorn

JSON_HEADERS = [(b"content-type", b"application/json")]
MODELS = orjson.dumps({"object": "list", "data": [{"id": m, "object": "model", "owned_by": "bench"}
                                                  for m in ("llama-3.1-8b-instruct", "qwen3-32b")]})


COMPLETION = orjson.dumps({"id": "bench", "object": "chat.completion", "model": "qwen3-32b",
                           "choices": [{"index": 0, "message": {"role": "assistant", "content": "The answer is 42."},
                                        "finish_reason": "stop"}],
                           "usage": {"prompt_tokens": 12, "completion_tokens": 6, "total_tokens": 18}})


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """The same answer whatever was asked: the request body is left to uvicorn to discard."""
    if scope["type"] != "http":
        return
    payload = MODELS if scope["path"].endswith("/models") else COMPLETION
    await send({"type": "http.response.start", "status": 200, "headers": JSON_HEADERS})
    await send({"type": "http.response.body", "body": payload})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning", lifespan="off")


if __name__ == "__main__":
    main()
