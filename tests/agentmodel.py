"""A scripted model on 127.0.0.1 that plays the agent for a real runtime (issue 31).

The real ``claude`` and ``gemini`` CLIs are pointed at it (``ANTHROPIC_BASE_URL``,
``GOOGLE_GEMINI_BASE_URL``). Each request of the agent's main loop (the one that
offers the file tools) is answered with the next step of a script: one tool call, or,
after the last, a closing text. The step is read from the request itself (how many tool
results it carries), so the server holds no conversation state and a retried request
gets the same answer. Every tool result the runtime sends back is recorded: that is
what the model was told, refusals included.

Any other request (a title, a quota probe, a classifier) gets a short text of the kind
it asked for. Bounded: loopback only, at most ``max_requests`` answered, and the server
stops itself after ``deadline`` seconds. Each streamed reply is sent with
``Connection: close`` (both runtimes' clients otherwise wait on a kept-alive stream).
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Step:
    """One tool call the model makes: the runtime's tool name and its input."""

    tool: str
    args: dict[str, Any]


@dataclass
class Exchange:
    """What the runtime sent back for one step."""

    step: int
    tool: str
    result: str


@dataclass
class ScriptedModel:
    """The server; use as a context manager. ``url`` is its base URL."""

    script: list[Step]
    closing: str = "Done."
    max_requests: int = 60
    deadline: float = 240.0
    results: list[Exchange] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    bodies: list[Any] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> ScriptedModel:
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

            def do_GET(self) -> None:  # noqa: N802
                model._note(f"GET {self.path}")
                self._json({})

            def do_HEAD(self) -> None:  # noqa: N802
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.send_header("Connection", "close")
                self.end_headers()

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(min(length, 64 << 20))
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                model.bodies.append(body)
                if not model._note(f"POST {self.path}"):
                    self.send_error(429)
                    return
                if "/v1/messages" in self.path:
                    self._anthropic(body)
                elif ":streamGenerateContent" in self.path or ":generateContent" in self.path:
                    self._gemini(body, stream="streamGenerateContent" in self.path)
                elif ":countTokens" in self.path:
                    self._json({"totalTokens": 10})
                else:
                    self._json({})

            # -- replies ------------------------------------------------------------

            def _json(self, obj: object) -> None:
                data = json.dumps(obj).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(data)
                self.close_connection = True

            def _sse(self, events: list[tuple[str | None, object]]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                for name, data in events:
                    head = f"event: {name}\n" if name else ""
                    self.wfile.write(f"{head}data: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()
                self.close_connection = True

            # -- Anthropic Messages API ---------------------------------------------

            def _anthropic(self, body: dict[str, Any]) -> None:
                if self.path.startswith("/v1/messages/count_tokens"):
                    self._json({"input_tokens": 10})
                    return
                tools = {t.get("name") for t in body.get("tools") or () if isinstance(t, dict)}
                main = bool(model.script) and model.script[0].tool in tools
                step = model._anthropic_step(body.get("messages") or []) if main else 0
                if main and step < len(model.script):
                    s = model.script[step]
                    block: dict[str, Any] = {"type": "tool_use", "id": f"toolu_{step:04d}",
                                             "name": s.tool, "input": {}}
                    delta = {"type": "input_json_delta", "partial_json": json.dumps(s.args)}
                    stop = "tool_use"
                else:
                    block = {"type": "text", "text": ""}
                    delta = {"type": "text_delta", "text": model.closing if main else "ok"}
                    stop = "end_turn"
                usage = {"input_tokens": 10, "output_tokens": 10}
                message = {"id": f"msg_{time.monotonic_ns()}", "type": "message",
                           "role": "assistant", "model": body.get("model", "m"),
                           "content": [], "stop_reason": None, "stop_sequence": None,
                           "usage": usage}
                if not body.get("stream"):
                    full = dict(block)
                    if block["type"] == "tool_use":
                        full["input"] = model.script[step].args
                    else:
                        full["text"] = delta["text"]
                    self._json({**message, "content": [full], "stop_reason": stop})
                    return
                self._sse([
                    ("message_start", {"type": "message_start", "message": message}),
                    ("content_block_start", {"type": "content_block_start", "index": 0,
                                             "content_block": block}),
                    ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                             "delta": delta}),
                    ("content_block_stop", {"type": "content_block_stop", "index": 0}),
                    ("message_delta", {"type": "message_delta",
                                       "delta": {"stop_reason": stop, "stop_sequence": None},
                                       "usage": {"output_tokens": 10}}),
                    ("message_stop", {"type": "message_stop"}),
                ])

            # -- Gemini API ---------------------------------------------------------

            def _gemini(self, body: dict[str, Any], stream: bool) -> None:
                names = {d.get("name") for t in body.get("tools") or () if isinstance(t, dict)
                         for d in t.get("functionDeclarations") or () if isinstance(d, dict)}
                main = bool(model.script) and model.script[0].tool in names
                step = model._gemini_step(body.get("contents") or []) if main else 0
                if main and step < len(model.script):
                    s = model.script[step]
                    part: dict[str, Any] = {"functionCall": {"name": s.tool, "args": s.args}}
                else:
                    cfg = body.get("generationConfig") or {}
                    wants_json = cfg.get("responseMimeType") == "application/json"
                    part = {"text": model.closing if main else (
                        json.dumps({"reasoning": "scripted", "next_speaker": "user",
                                    "model_choice": "flash"}) if wants_json else "ok")}
                reply = {"candidates": [{"content": {"role": "model", "parts": [part]},
                                         "finishReason": "STOP", "index": 0}],
                         "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 10,
                                           "totalTokenCount": 20},
                         "modelVersion": "gemini-2.5-flash"}
                if stream:
                    self._sse([(None, reply)])
                else:
                    self._json(reply)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        self._timer = threading.Timer(self.deadline, self._server.shutdown)
        self._timer.daemon = True
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()

    # -- the script's position, read from the request --------------------------------

    _lock = threading.Lock()

    def _note(self, what: str) -> bool:
        with self._lock:
            self.requests.append(what)
            return len(self.requests) <= self.max_requests

    def _record(self, step: int, tool: str, result: str) -> None:
        with self._lock:
            if not any(e.step == step for e in self.results):
                self.results.append(Exchange(step, tool, result))

    def _anthropic_step(self, messages: list[Any]) -> int:
        """The tool results so far; each step's is recorded with whatever else the
        runtime sent before the model's next turn (a post-call hook's message)."""
        step, said = 0, list[str]()
        for m in messages:
            if not isinstance(m, dict):
                continue
            if m.get("role") == "assistant":
                if said:
                    self._record(step - 1, self.script[step - 1].tool, "\n".join(said))
                said = []
                continue
            content = m.get("content")
            for block in content if isinstance(content, list) else [content]:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    step += 1
                    said.append(_text_of(block.get("content")))
                elif step and said:
                    said.append(_text_of([block] if isinstance(block, dict) else block))
        if said:
            self._record(step - 1, self.script[min(step, len(self.script)) - 1].tool,
                         "\n".join(said))
        return step

    def _gemini_step(self, contents: list[Any]) -> int:
        step = 0
        for c in contents:
            for part in c.get("parts") or () if isinstance(c, dict) else ():
                response = part.get("functionResponse") if isinstance(part, dict) else None
                if isinstance(response, dict):
                    self._record(step, str(response.get("name")),
                                 json.dumps(response.get("response"), ensure_ascii=False))
                    step += 1
        return step


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return json.dumps(content)
