"""Hypothesis strategies for hostile HTTP/1.1 request heads and message framing, as raw bytes.

A head is built from parts, each either honest or hostile: the request line (method, target, version,
separators), the line ending, header names and values (invalid token characters, NUL, bare CR,
obs-fold continuation lines, UTF-8 and Latin-1 bytes, thousands of fields), and the framing
(Content-Length and Transfer-Encoding, alone, repeated, malformed or both at once). Mixing honest and
hostile parts keeps many examples close enough to valid to get past the parser and reach the app.
"""

from __future__ import annotations

import string

import attrs
from hypothesis import strategies as st

from .live import JSON_ACCEPT, TOKEN

TCHAR = string.ascii_letters + string.digits + "!#$%&'*+-.^_`|~"
PING = b'{"jsonrpc":"2.0","id":7,"method":"ping"}'

METHODS = st.one_of(st.sampled_from([b"GET", b"POST", b"DELETE", b"PUT", b"OPTIONS", b"HEAD", b"PATCH", b"TRACE",
                                     b"CONNECT", b"PRI", b"get", b"POST ", b""]),
                    st.text(TCHAR, min_size=1, max_size=12).map(str.encode),
                    st.binary(min_size=1, max_size=12))
TARGETS = st.one_of(st.sampled_from([b"/mcp", b"/health", b"/ws", b"/mcp/tools/list", b"/docs/README.md", b"*",
                                     b"/mcp?x=1", b"http://127.0.0.1/mcp", b"//mcp", b"/mcp/../health",
                                     b"/%2e%2e/%2e%2e/etc/passwd", b"/docs/..%2f..%2fetc%2fpasswd", b"/mcp#frag",
                                     b"/\xff\xfe", b"/mcp%00", b""]),
                    st.binary(max_size=40).map(lambda tail: b"/" + tail),
                    st.integers(1_000, 200_000).map(lambda size: b"/mcp?" + b"a" * size))
VERSIONS = st.sampled_from([b"HTTP/1.1", b"HTTP/1.0", b"HTTP/2.0", b"HTTP/0.9", b"HTTP/1.10", b"HTTP/9.9",
                            b"HTTPS/1.1", b"http/1.1", b"HTTP/1", b"", b"HTTP/1.1 extra"])
SEPARATORS = st.sampled_from([b" ", b" ", b" ", b"  ", b"\t", b"\x0b"])
EOLS = st.sampled_from([b"\r\n", b"\r\n", b"\r\n", b"\n", b"\r", b"\n\r"])

KNOWN_NAMES = [b"Content-Length", b"Transfer-Encoding", b"Host", b"Authorization", b"Mcp-Session-Id",
               b"Last-Event-ID", b"Content-Type", b"Accept", b"MCP-Protocol-Version", b"Connection", b"Expect",
               b"Upgrade", b"Origin", b"X-Forwarded-For", b"Mcp-Method", b"Mcp-Name", b"Cookie", b"Range"]
HEADER_NAMES = st.one_of(st.sampled_from(KNOWN_NAMES),
                         st.text(TCHAR, min_size=1, max_size=30).map(str.encode),
                         st.sampled_from([b"Host ", b" Host", b"Con tent-Length", b"", b"X:Y", b"\x00", b"\xff\xfe",
                                          b"X\rY", b"Content-Length\t"]),
                         st.binary(min_size=1, max_size=20))
HEADER_VALUES = st.one_of(st.text(max_size=60).map(lambda text: text.encode("utf-8", "surrogatepass")),
                          st.binary(max_size=60),
                          st.sampled_from([b"", b" ", b"\x00", b"a\rb", b"a\nb", b"\xc3\x28", b"\xed\xa0\x80",
                                           b"\xf4\x90\x80\x80", b"\xe9t\xe9", b"1_\xb2", b"\xd9\xa1_\xd9\xa2",
                                           b"Bearer " + TOKEN.encode() + b"\x00", b"Bearer", b"Basic Zm9vOmJhcg==",
                                           b"chunked", b"close", b"keep-alive, Upgrade", b"100-continue",
                                           b"application/json; charset=latin-1", b"*/*;q=\xff"]))


@attrs.frozen
class Framing:
    """How a message says where its body ends, and the body it then sends."""
    name: str
    headers: list[bytes]
    body: bytes
    ambiguous: bool = False
    """RFC 9112 §6.3 leaves no single reading (both headers, two lengths, an encoding we cannot know): a
    server must refuse it and close, or a proxy in front could read a different message boundary."""


def _chunked(payload: bytes) -> bytes:
    return b"%x\r\n%s\r\n0\r\n\r\n" % (len(payload), payload)


SMUGGLED = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


def framings() -> st.SearchStrategy[Framing]:
    honest = [Framing("content-length", [b"Content-Length: %d" % len(PING)], PING),
              Framing("chunked", [b"Transfer-Encoding: chunked"], _chunked(PING)),
              Framing("none", [], b"")]
    bad_lengths = [Framing(f"content-length {value!r}", [b"Content-Length: " + value], PING)
                   for value in (b"-1", b"+40", b"0x28", b"40.0", b"4e1", b"", b" ", b"99999999999999999999999",
                                 b"18446744073709551616", b"\xd9\xa4\xd9\xa0", b"40 40", b"abc")]
    short_or_long = [Framing("content-length longer than the body", [b"Content-Length: %d" % (len(PING) + 50)], PING),
                     Framing("content-length shorter than the body", [b"Content-Length: 5"], PING),
                     Framing("content-length past the body cap", [b"Content-Length: %d" % (64 << 20)], PING)]
    ambiguous = [
        Framing("two equal lengths in one field", [b"Content-Length: 40, 40"], PING, ambiguous=True),
        Framing("two different lengths", [b"Content-Length: 40", b"Content-Length: 41"], PING, ambiguous=True),
        Framing("CL.TE", [b"Content-Length: %d" % len(_chunked(PING) + SMUGGLED), b"Transfer-Encoding: chunked"],
                _chunked(PING) + SMUGGLED, ambiguous=True),
        Framing("TE.CL", [b"Transfer-Encoding: chunked", b"Content-Length: 4"], _chunked(PING) + SMUGGLED,
                ambiguous=True),
        Framing("TE chunked twice", [b"Transfer-Encoding: chunked", b"Transfer-Encoding: chunked"],
                _chunked(PING) + SMUGGLED, ambiguous=True),
        *[Framing(f"transfer-encoding {value!r}", [b"Transfer-Encoding: " + value], _chunked(PING) + SMUGGLED,
                  ambiguous=True)
          for value in (b"chunked, identity", b"identity", b"xchunked", b"chunked\x00", b"gzip", b"gzip, chunked, chunked",
                        b"\x0bchunked", b"chunked;q=1", b"ch\xc3\xbcnked")],
        Framing("transfer-encoding folded", [b"Transfer-Encoding:", b" chunked"], _chunked(PING) + SMUGGLED,
                ambiguous=True),
        Framing("transfer-encoding name with a space", [b"Transfer-Encoding : chunked",
                                                        b"Content-Length: %d" % len(PING)], PING + SMUGGLED,
                ambiguous=True),
    ]
    bad_chunks = [Framing(f"chunk {shape!r}", [b"Transfer-Encoding: chunked"], shape)
                  for shape in (b"fffffffffffffffffff\r\n" + PING, b"-1\r\n" + PING, b"28 \r\n" + PING + b"\r\n0\r\n\r\n",
                                b"28;" + b"x" * 10_000 + b"\r\n" + PING + b"\r\n0\r\n\r\n",
                                b"28\r\n" + PING + b"XX0\r\n\r\n", b"28\n" + PING + b"\n0\n\n",
                                b"0\r\n" + b"X-Trailer: 1\r\n" * 2000 + b"\r\n", b"28\r\n" + PING)]
    return st.sampled_from([*honest, *bad_lengths, *short_or_long, *ambiguous, *bad_chunks])


@attrs.frozen
class Head:
    request: bytes
    framing: Framing
    description: str


@st.composite
def hostile_requests(draw: st.DrawFn) -> Head:
    """A POST-or-anything to the MCP endpoint or elsewhere, any part of which may be hostile."""
    eol = draw(EOLS)
    honest_line = draw(st.booleans())
    if honest_line:
        line = b"POST /mcp HTTP/1.1"
    else:
        sep = draw(SEPARATORS)
        line = draw(METHODS) + sep + draw(TARGETS) + sep + draw(VERSIONS)
    fields = [b"Host: 127.0.0.1"] if draw(st.integers(0, 9)) else []
    if draw(st.integers(0, 9)):
        fields.append(b"Authorization: Bearer " + TOKEN.encode())
    fields += [b"Content-Type: application/json", b"Accept: " + JSON_ACCEPT.encode()]
    extra = draw(st.lists(st.tuples(HEADER_NAMES, HEADER_VALUES, st.sampled_from([b": ", b":", b" : ", b":\t"])),
                          max_size=8))
    fields += [name + colon + value for name, value, colon in extra]
    many = draw(st.sampled_from([0, 0, 0, 100, 1000, 5000]))
    fields += [b"X-Many-%d: v" % i for i in range(many)]
    if draw(st.integers(0, 7)) == 0:
        fields.insert(draw(st.integers(0, len(fields))), b" folded continuation")
    framing = draw(framings())
    fields += framing.headers
    fields.append(b"Connection: close")
    request = line + eol + eol.join(fields) + eol + eol + framing.body
    description = (f"line {line[:80]!r}, eol {eol!r}, {len(extra)} odd fields {[(n[:30], v[:30]) for n, v, _ in extra]}, "
                   f"{many} more, framing {framing.name}")
    return Head(request, framing, description)


def pipelined_pings(count: int, *, first_id: int) -> list[bytes]:
    """`count` honest, well-framed, kept-alive ping POSTs with consecutive ids."""
    requests = []
    for offset in range(count):
        body = b'{"jsonrpc":"2.0","id":%d,"method":"ping"}' % (first_id + offset)
        requests.append(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + TOKEN.encode()
                        + b"\r\nContent-Type: application/json\r\nAccept: " + JSON_ACCEPT.encode()
                        + b"\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    return requests
