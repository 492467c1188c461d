"""A scripted OpenAI-compatible chat server on 127.0.0.1, for tests.

Each request pops the next scripted reply: a string (streamed back in small
pieces as server-sent events, or whole when stream is false) or an int HTTP
status (429, 500 ...).  Every request body is recorded.
"""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


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
                reply = fake.script.pop(0) if fake.script else "I don't know based on the available documents."
                if isinstance(reply, int):
                    payload = json.dumps({"error": {"message": f"scripted {reply}", "type": "scripted"}}).encode()
                    self.send_response(reply)
                    self.send_header("content-type", "application/json")
                    self.send_header("retry-after-ms", "10")
                    self.send_header("content-length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                if body.get("stream"):
                    self.send_response(200)
                    self.send_header("content-type", "text/event-stream")
                    self.end_headers()
                    pieces = [reply[i:i + 7] for i in range(0, len(reply), 7)]
                    for i, piece in enumerate(pieces):
                        event = {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": body.get("model"),
                                 "choices": [{"index": 0, "delta": {"role": "assistant", "content": piece} if i == 0
                                              else {"content": piece}, "finish_reason": None}]}
                        self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
                        self.wfile.flush()
                    end = {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": body.get("model"),
                           "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
                    self.wfile.write(f"data: {json.dumps(end)}\n\ndata: [DONE]\n\n".encode())
                    return
                payload = json.dumps({"id": "c1", "object": "chat.completion", "created": 0, "model": body.get("model"),
                                      "choices": [{"index": 0, "finish_reason": "stop",
                                                   "message": {"role": "assistant", "content": reply}}]}).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()
