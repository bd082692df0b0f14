// The LangGraph SDK's store.searchItems with a query against a dawn
// server whose Store embeds items (store.index in dawn.yaml) with a
// scripted embedding model: the query finds the item that means it
// before the one that only shares a word. DAWN_MEANING_URL is set by
// `go test ./e2e -run TestLangGraphClients`, which serves the vectors.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client } from "@langchain/langgraph-sdk";

const apiUrl = process.env.DAWN_MEANING_URL;
if (!apiUrl) throw new Error("DAWN_MEANING_URL is not set: run these tests with `go test ./e2e -run TestLangGraphClients`, which starts the server");

test("store: searchItems with a query ranks by meaning", async () => {
  const c = new Client({ apiUrl, callerOptions: { maxRetries: 0 } });
  await c.store.putItem(["docs", "acme"], "goods", { text: "Customers can send purchases back within 30 days and get their money back" });
  await c.store.putItem(["docs", "acme"], "privacy", { text: "Our privacy policy explains which cookies we keep" });

  const found = await c.store.searchItems(["docs"], { query: "refund policy" });
  assert.deepEqual(found.items.map((i) => i.key), ["goods", "privacy"]);
  assert.equal(found.items[0].score, 0.5);
  const first = await c.store.searchItems(["docs"], { query: "refund policy", limit: 1 });
  assert.deepEqual(first.items.map((i) => i.key), ["goods"]);
  const none = await c.store.searchItems(["other"], { query: "refund policy" });
  assert.deepEqual(none.items, []);
});
