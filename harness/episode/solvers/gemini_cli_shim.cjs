// Loaded into Gemini CLI's Node process (`node --require`) by the runner: its connections to the model's host
// (GOOGLE_GEMINI_BASE_URL's, `harness-proxy`) go to the proxy's unix socket instead, named by
// HARNESS_MODEL_SOCKET; every other connection is left as it is, for the sandbox to refuse (it has no IP).
// Node's `fetch` (undici, Node's own or the copy bundled with the CLI) and `node:http` both open their TCP
// connections with `net.connect`; a connect given a `path` is a unix socket's, with no address looked up.
// Why not undici's global dispatcher: Gemini CLI sets its own at load, after this file has run.
'use strict';

const net = require('node:net');
const http = require('node:http');

const socketPath = process.env.HARNESS_MODEL_SOCKET;
const proxyHost = 'harness-proxy';

function routed(connect) {
  return function connectToProxy(...args) {
    const options = args[0];
    if (options !== null && typeof options === 'object' && options.host === proxyHost) {
      args[0] = { ...options, path: socketPath, host: undefined, port: undefined };
    }
    return connect.apply(this, args);
  };
}

net.connect = net.createConnection = routed(net.createConnection);
http.Agent.prototype.createConnection = routed(http.Agent.prototype.createConnection);
