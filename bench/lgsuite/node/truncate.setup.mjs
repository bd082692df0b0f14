// The upstream tests start their describe blocks from an empty store by
// calling LangGraph.js's /internal/truncate, an unauthenticated reset that
// Dawn does not serve. This setup file answers those calls itself and
// carries out the same reset through Dawn's public API: it deletes every
// thread (with its runs and checkpoints), every assistant that is not a
// route's own, and every Store item. Other requests pass through.
import { Client } from "@langchain/langgraph-sdk";

const passThrough = globalThis.fetch;

globalThis.fetch = async (input, init) => {
  const url = new URL(typeof input === "string" || input instanceof URL ? input : input.url);
  if (url.pathname !== "/internal/truncate") return passThrough(input, init);
  await truncate(new Client({ apiUrl: url.origin }), JSON.parse(init?.body ?? "{}"));
  return new Response(null, { status: 204 });
};

async function truncate(client, flags) {
  if (flags.threads || flags.runs || flags.checkpoint) await drain(() => client.threads.search({ limit: 100 }), (t) => client.threads.delete(t.thread_id));
  if (flags.assistants) {
    const own = (a) => a.metadata?.created_by !== "system";
    await drain(async () => (await client.assistants.search({ limit: 1000 })).filter(own), (a) => client.assistants.delete(a.assistant_id));
  }
  if (flags.store) {
    const { namespaces } = await client.store.listNamespaces({ limit: 1000 });
    for (const ns of namespaces) {
      await drain(async () => (await client.store.searchItems(ns, { limit: 100 })).items, (it) => client.store.deleteItem(it.namespace, it.key));
    }
  }
}

// drain deletes what list returns until it returns nothing, or until a
// round deletes nothing (a thread whose run cannot be stopped yet): the
// test that follows then meets what is left, as it would meet an error.
async function drain(list, del) {
  for (;;) {
    const items = await list();
    const done = await Promise.allSettled(items.map(del));
    if (!done.some((d) => d.status === "fulfilled")) return;
  }
}
