"""A scripted OpenAI-compatible chat server on 127.0.0.1, for tests.

Each request pops the next scripted reply:

* a string: streamed back in small pieces as server-sent events ending with
  finish_reason "stop" (or returned whole when stream is false);
* an int: that HTTP status (429, 500 ...) with an error body;
  ``{"status": 429, "retry_after": "30"}`` the same, asking the client to wait that long;
  ``{"status": 400, "message": "..."}`` with that error message;
* a dict, to misbehave on demand:
  ``{"text": "...", "finish": "length"}`` a stream that ends with another finish reason,
  ``{"text": "...", "cut": True}`` a stream cut off (no finish, no [DONE]),
  ``{"text": "...", "raw": "data: {broken\\n\\n"}`` raw bytes sent after the text,
  ``{"text": "...", "error": "overloaded"}`` an error event mid-stream,
  ``{"text": "...", "pause": 0.2}`` each piece that many seconds after the last (a trickle);
  ``{"text": "...", "idle": (2.0, b": keepalive\n\n")}`` after the text, those bytes every 0.05 s
  for 2 s (keep-alive comments, events without choices), then the finish;
  ``{"text": "...", "after": " more"}`` text sent after the finish event;
  ``{"text": "...", "whole": True}`` one JSON reply although a stream was asked for;
  ``{"hang": 1.0}`` nothing for that long (a hung server), then a 504.

Every request body is recorded.
"""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

REFUSAL = "I don't know based on the available documents."


def _event(model, delta, finish=None) -> bytes:
    body = {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return f"data: {json.dumps(body)}\n\n".encode()


class FakeOpenAI:
    def __init__(self):
        self.script: list = []
        self.requests: list[dict] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                fake.requests.append(body)
                reply = fake.script.pop(0) if fake.script else REFUSAL
                if isinstance(reply, dict) and "hang" in reply:
                    time.sleep(reply["hang"])  # past the client's timeout: it has gone
                    return self._status(504)
                if isinstance(reply, int):
                    return self._status(reply)
                if isinstance(reply, dict) and "status" in reply:
                    return self._status(reply["status"], reply.get("retry_after"), reply.get("message"))
                if isinstance(reply, str):
                    reply = {"text": reply}
                if body.get("stream") and not reply.get("whole"):
                    return self._stream(body.get("model"), reply)
                payload = json.dumps({"id": "c1", "object": "chat.completion", "created": 0, "model": body.get("model"),
                                      "choices": [{"index": 0, "finish_reason": reply.get("finish", "stop"),
                                                   "message": {"role": "assistant", "content": reply["text"]}}]}).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def _status(self, code, retry_after=None, message=None):
                payload = json.dumps({"error": {"message": message or f"scripted {code}", "type": "scripted"}}).encode()
                self.send_response(code)
                self.send_header("content-type", "application/json")
                if retry_after is None:
                    self.send_header("retry-after-ms", "10")
                else:
                    self.send_header("retry-after", retry_after)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def _stream(self, model, reply):
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                text = reply.get("text", "")
                pieces = [text[i:i + 7] for i in range(0, len(text), 7)]
                for i, piece in enumerate(pieces):
                    if i and reply.get("pause"):
                        time.sleep(reply["pause"])
                    delta = {"role": "assistant", "content": piece} if i == 0 else {"content": piece}
                    try:
                        self.wfile.write(_event(model, delta))
                        self.wfile.flush()
                    except (BrokenPipeError, ConnectionResetError):  # the client hung up: fine
                        return
                if "raw" in reply:
                    self.wfile.write(reply["raw"].encode())
                if "error" in reply:
                    self.wfile.write(f"event: error\ndata: {json.dumps({'error': {'message': reply['error']}})}\n\n"
                                     .encode())
                if "idle" in reply:
                    seconds, filler = reply["idle"]
                    end = time.monotonic() + seconds
                    try:
                        while time.monotonic() < end:
                            self.wfile.write(filler)
                            self.wfile.flush()
                            time.sleep(0.05)
                    except (BrokenPipeError, ConnectionResetError):
                        return
                if reply.get("cut"):
                    self.wfile.flush()
                    self.close_connection = True
                    return
                after = _event(model, {"content": reply["after"]}) if "after" in reply else b""
                try:
                    self.wfile.write(_event(model, {}, reply.get("finish", "stop")) + after + b"data: [DONE]\n\n")
                except (BrokenPipeError, ConnectionResetError):
                    return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()
