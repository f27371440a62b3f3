"""A minimal OpenAI-compatible upstream for bench/gateway.py: a raw ASGI app under uvicorn answering
`POST /v1/chat/completions` with one fixed completion and `GET /v1/models` with two models, at once.
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


def completion(model: str) -> bytes:
    return orjson.dumps({"id": "bench", "object": "chat.completion", "model": model,
                         "choices": [{"index": 0, "message": {"role": "assistant", "content": "The answer is 42."},
                                      "finish_reason": "stop"}],
                         "usage": {"prompt_tokens": 12, "completion_tokens": 6, "total_tokens": 18}})


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    if scope["path"].endswith("/models"):
        payload = MODELS
    else:
        payload = completion(orjson.loads(body).get("model", "?"))
    await send({"type": "http.response.start", "status": 200, "headers": JSON_HEADERS})
    await send({"type": "http.response.body", "body": payload})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning", lifespan="off")


if __name__ == "__main__":
    main()
