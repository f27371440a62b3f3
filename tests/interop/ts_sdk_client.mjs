// One session of the official TypeScript SDK client (@modelcontextprotocol/sdk) against hexmcp, as the JS
// hosts built on it (VS Code's client, MCP Inspector, mcp-remote) drive a server. Every result goes through
// the SDK's own zod schemas, and callTool checks structuredContent against the tool's outputSchema (ajv),
// so a result hexmcp shapes wrongly fails here even where the Python SDK is lenient.
//
//   node ts_sdk_client.mjs '{"sdk": "<node_modules folder>", "transport": "stdio"|"http", "command": [...], "url": "..."}'
//
// Prints one JSON object: {"steps": {name: {"ok": bool, "detail": ...}}, "errors": [...]}; the pytest side
// (test_ts_sdk_client.py) judges it.
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const config = JSON.parse(process.argv[2]);
const sdkRoot = path.join(config.sdk, '@modelcontextprotocol', 'sdk', 'dist', 'esm');
const load = (file) => import(pathToFileURL(path.join(sdkRoot, file)).href);
const { Client } = await load('client/index.js');
const types = await load('types.js');

const steps = {};
let negotiated = null;
const errors = []; // what the SDK reports through onerror while the session is open: stray answers, bad frames
const lastProgressOnWire = new Map(); // step -> the last progress notification's params the tap saw in it
let current = null; // the step running when an error is reported
async function step(name, body) {
  current = name;
  try {
    steps[name] = { ok: true, detail: (await body()) ?? null };
  } catch (error) {
    steps[name] = { ok: false, detail: `${error?.constructor?.name}: ${error?.code ?? ''} ${error?.message ?? error}` };
  }
}

async function transport() {
  if (config.transport === 'stdio') {
    const { StdioClientTransport } = await load('client/stdio.js');
    const [command, ...args] = config.command;
    return new StdioClientTransport({ command, args, stderr: 'ignore' });
  }
  const { StreamableHTTPClientTransport } = await load('client/streamableHttp.js');
  return new StreamableHTTPClientTransport(new URL(config.url));
}

async function connect() {
  // As VS Code declares itself: roots (and answers roots/list), sampling and elicitation.
  const client = new Client({ name: 'hexmcp-interop', version: '1.0.0' },
    { capabilities: { roots: { listChanged: true }, sampling: {}, elicitation: {} } });
  client.setRequestHandler(types.ListRootsRequestSchema, async () => ({ roots: [{ uri: 'file:///interop', name: 'interop' }] }));
  const open = await transport();
  // A tap on what the server sends, in wire order. It reads the version the server answered initialize
  // with (older SDKs keep it to themselves), and it judges progress: the SDK hands notifications to their
  // handlers a microtask later but settles an answer at once, so a call's last progress report, sent before
  // its answer and read in the same chunk, reaches the SDK after it and is dropped as for "an unknown
  // token". On the wire, a progress report after its request's answer is the server's fault.
  const answered = new Set();
  let deliver;
  Object.defineProperty(open, 'onmessage', {
    configurable: true,
    get: () => deliver,
    set: (handler) => {
      deliver = (message, extra) => {
        negotiated ??= message?.result?.protocolVersion ?? null;
        if (message?.id !== undefined && ('result' in message || 'error' in message)) answered.add(message.id);
        if (message?.method === 'notifications/progress') lastProgressOnWire.set(current, message.params);
        if (message?.method === 'notifications/progress' && answered.has(message.params?.progressToken)) {
          errors.push({ step: current, error: `progress after the answer: ${JSON.stringify(message)}` });
        }
        return handler?.(message, extra);
      };
    },
  });
  let closing = false;
  client.onerror = (error) => {
    const said = String(error?.message ?? error);
    if (!closing && !said.startsWith('Received a progress notification for an unknown token')) {
      errors.push({ step: current, error: said });
    }
  };
  await client.connect(open);
  // From here on the SDK reports its own shutdown: a DELETE ends the session, the server closes its GET
  // stream, and the SDK may try to reopen it before close() (a 404, as the spec has it for an ended session).
  const close = async () => {
    closing = true;
    if (open.terminateSession) await open.terminateSession(); // a DELETE refused (but with 405) still throws
    await client.close();
  };
  return { client, open, close };
}

const text = (result) => result.content?.find((part) => part.type === 'text')?.text ?? '';
const summary = (result) => ({ isError: !!result.isError, structured: result.structuredContent !== undefined, text: text(result).slice(0, 300) });
// An invalid call may fail either way the spec has allowed: a JSON-RPC error (-32602) or, since 2025-11-25
// (SEP-1303), a tool result with isError; anything else (a success, another code) is reported as is.
async function invalidCall(client, name, args) {
  try {
    const result = await client.callTool({ name, arguments: args });
    return { kind: result.isError ? 'tool-error' : 'success', text: text(result).slice(0, 300) };
  } catch (error) {
    return { kind: 'rpc-error', code: error.code, message: String(error.message).slice(0, 300) };
  }
}

const { client, open, close } = await connect();
let tools = [];
let prompts = [];
let templates = [];
await step('initialize', async () => ({
  protocolVersion: negotiated,
  server: client.getServerVersion(),
  capabilities: Object.keys(client.getServerCapabilities() ?? {}).sort(),
}));
await step('tools/list', async () => {
  tools = (await client.listTools()).tools;
  return tools.map((tool) => ({ name: tool.name, output: !!tool.outputSchema, annotations: tool.annotations ?? null }));
});
await step('prompts/list', async () => { prompts = (await client.listPrompts()).prompts; return prompts.map((p) => p.name); });
await step('resources/list', async () => (await client.listResources()).resources.map((r) => r.uri));
await step('resources/templates/list', async () => {
  templates = (await client.listResourceTemplates()).resourceTemplates;
  return templates.map((t) => t.uriTemplate);
});
await step('ping', async () => { await client.ping(); return 'pong'; });
await step('logging/setLevel', async () => { await client.setLoggingLevel('debug'); return 'ok'; });

// Every tool with valid arguments; the concept tools take an id resolveConcept finds.
const valid = {
  list_categories: {}, classify_text: { text: 'What is 5 + 3?', with_probabilities: true },
  search: { query: 'routing prompts' }, fetch: { id: 'alpha.md' }, listDocuments: {},
  searchPassages: { query: 'routing prompts', limit: 2 }, listModels: {}, routeCompletion: { prompt: 'hello' },
  resolveConcept: { term: 'alpha' }, analyzeGraph: { metric: 'degree' }, linkEntities: { text: 'Alpha and Beta' },
};
let conceptId = null;
for (const tool of tools) {
  if (tool.name === 'indexDocuments') continue;
  let args = valid[tool.name];
  if (tool.name === 'explainConcept' || tool.name === 'queryGraph') args = { conceptId };
  await step(`call ${tool.name}`, async () => {
    const result = await client.callTool({ name: tool.name, arguments: args ?? {} });
    // Before 2025-06-18 there is no structuredContent: the same JSON is the text.
    if (tool.name === 'resolveConcept') conceptId = (result.structuredContent ?? JSON.parse(text(result))).items?.[0]?.id ?? null;
    return summary(result);
  });
  if ((tool.inputSchema.required ?? []).length) {
    await step(`call ${tool.name} without its required arguments`, () => invalidCall(client, tool.name, {}));
  }
}
await step('call classify_text with a wrong type', () => invalidCall(client, 'classify_text', { text: 42 }));
await step('call an unknown tool', () => invalidCall(client, 'noSuchTool', {}));

await step('resources/read document template', async () => {
  const read = await client.readResource({ uri: 'hexmcp://docs/alpha.md' });
  return read.contents.map((c) => ({ uri: c.uri, mimeType: c.mimeType ?? null, text: (c.text ?? '').slice(0, 80) }));
});
await step('resources/read models', async () => (await client.readResource({ uri: 'hexmcp://models' })).contents.length);
await step('completion/complete', async () => (await client.complete({
  ref: { type: 'ref/prompt', name: 'routed_prompt' }, argument: { name: 'category', value: 'ma' },
})).completion.values);
await step('prompts/get', async () => {
  const got = await client.getPrompt({ name: 'routed_prompt', arguments: { category: 'math', prompt: 'What is 5 + 3?' } });
  return got.messages.map((m) => m.role);
});

await step('progress', async () => {
  const seen = [];
  const result = await client.callTool({ name: 'indexDocuments', arguments: { fresh: true } }, undefined,
    { onprogress: (progress) => seen.push(progress), timeout: 120000 });
  // `last` as the tap saw it: the SDK's own handler can miss the last report (read in one chunk with the answer).
  const { progressToken, ...last } = lastProgressOnWire.get('progress') ?? {};
  return { notifications: seen.length, handled: seen.at(-1) ?? null, last, ...summary(result) };
});
// Cancelled as soon as the first progress arrives: the server is then mid-way through the corpus.
await step('cancel', async () => {
  const abort = new AbortController();
  try {
    await client.callTool({ name: 'indexDocuments', arguments: { fresh: true } }, undefined,
      { signal: abort.signal, onprogress: () => abort.abort('cancelled by the interop test'), timeout: 120000 });
    return 'finished';
  } catch (error) {
    if (!abort.signal.aborted) throw error;
    return 'cancelled';
  }
});
await new Promise((resolve) => setTimeout(resolve, 1000)); // a stray answer to the cancelled call would land now
await step('ping after cancel', async () => { await client.ping(); return 'pong'; });
await step('roots/list_changed', async () => { await client.sendRootsListChanged(); await client.ping(); return 'sent'; });
await step('close', async () => {
  await close();
  return 'closed';
});
await step('reconnect', async () => {
  const again = await connect();
  await again.client.ping();
  const count = (await again.client.listTools()).tools.length;
  await again.close();
  return count;
});
process.stdout.write(JSON.stringify({ steps, errors }) + '\n');
process.exit(0);
