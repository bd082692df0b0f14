// Shared setup of the LangGraph client tests. e2e/langgraph_test.go starts
// the servers and passes their addresses:
//   DAWN_URL        the stock dawn binary serving examples/app offline
//   DAWN_GATED_URL  the same app in-process, whose model holds a run whose
//                   message says [hold:NAME] after its first tool step...
//   DAWN_GATE_URL   ...until POST DAWN_GATE_URL/NAME opens the gate.
import { Client } from "@langchain/langgraph-sdk";

function env(name) {
  const value = process.env[name];
  if (!value) {
    throw new Error(`${name} is not set: run these tests with \`go test ./e2e -run TestLangGraphClients\`, which starts the servers`);
  }
  return value;
}

export const apiUrl = env("DAWN_URL");
export const gatedUrl = env("DAWN_GATED_URL");

// client returns a LangGraph SDK client that does not retry, so a failing
// call fails the test at once.
export function client(url = apiUrl) {
  return new Client({ apiUrl: url, callerOptions: { maxRetries: 0 } });
}

// openGate lets the runs held on gate name go on.
export async function openGate(name) {
  const res = await fetch(`${env("DAWN_GATE_URL")}/${name}`, { method: "POST" });
  if (!res.ok) throw new Error(`opening gate ${name}: HTTP ${res.status}`);
}

// held is a user message that holds its run on gate name after the run's
// first tool step.
export function held(name, text = "Help me with my account") {
  return { messages: [{ type: "human", content: `[hold:${name}] ${text}` }] };
}

// collect reads a whole SDK stream into a list of {event, data, id}.
export async function collect(stream) {
  const parts = [];
  for await (const part of stream) parts.push(part);
  return parts;
}

// eventually polls check until it returns a truthy value, failing after
// about limitMs; it bounds how long a test waits, it measures nothing.
export async function eventually(what, check, limitMs = 20000, describe = () => "") {
  const deadline = Date.now() + limitMs;
  let last;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`gave up waiting for ${what}${last ? `: ${last.message}` : ""}${describe()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

// aiText is the text of the last AI message in messages.
export function lastAI(messages) {
  return [...messages].reverse().find((m) => m.type === "ai");
}
