// The LangGraph SDK's store client against the stock dawn binary: items
// put, read, searched, listed and deleted through client.store. It needs
// only DAWN_URL; with DAWN_REPLICA_URL, a second replica on the same
// Postgres (reliability/store_replicas_test.go), it also checks that an
// item put through one replica is found through the other.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client } from "@langchain/langgraph-sdk";

const apiUrl = process.env.DAWN_URL;
const replicaUrl = process.env.DAWN_REPLICA_URL;
if (!apiUrl) throw new Error("DAWN_URL is not set: run these tests with `go test ./e2e -run TestLangGraphClients`, which starts the server");

function client(url = apiUrl) {
  return new Client({ apiUrl: url, callerOptions: { maxRetries: 0 } });
}

test("store: putItem, getItem, searchItems, listNamespaces, deleteItem", async () => {
  const c = client();
  await c.store.putItem(["users", "u1", "prefs"], "color", { text: "Favorite color is blue", kind: "pref" });
  await c.store.putItem(["users", "u1", "facts"], "pet", { text: "Has a cat named Tom", kind: "fact" });
  await c.store.putItem(["users", "u2", "prefs"], "color", { text: "Likes red", kind: "pref" });

  const item = await c.store.getItem(["users", "u1", "prefs"], "color");
  assert.deepEqual(item.namespace, ["users", "u1", "prefs"]);
  assert.equal(item.key, "color");
  assert.deepEqual(item.value, { text: "Favorite color is blue", kind: "pref" });
  assert.ok(!Number.isNaN(Date.parse(item.createdAt)) && item.updatedAt);
  assert.equal(await c.store.getItem(["users", "u1", "prefs"], "missing"), null);

  const u1 = await c.store.searchItems(["users", "u1"]);
  assert.deepEqual(u1.items.map((i) => i.key).sort(), ["color", "pet"]);
  const prefs = await c.store.searchItems(["users"], { filter: { kind: "pref" } });
  assert.deepEqual(prefs.items.map((i) => i.namespace[1]).sort(), ["u1", "u2"]);
  const cat = await c.store.searchItems(["users"], { query: "CAT" });
  assert.deepEqual(cat.items.map((i) => i.key), ["pet"]);
  assert.equal(cat.items[0].score, 1);
  const paged = await c.store.searchItems(["users"], { limit: 1, offset: 1 });
  assert.equal(paged.items.length, 1);

  const all = await c.store.listNamespaces({ prefix: ["users"] });
  assert.deepEqual(all.namespaces, [["users", "u1", "facts"], ["users", "u1", "prefs"], ["users", "u2", "prefs"]]);
  const top = await c.store.listNamespaces({ prefix: ["users"], maxDepth: 2 });
  assert.deepEqual(top.namespaces, [["users", "u1"], ["users", "u2"]]);
  const bySuffix = await c.store.listNamespaces({ suffix: ["facts"] });
  assert.deepEqual(bySuffix.namespaces, [["users", "u1", "facts"]]);

  await c.store.deleteItem(["users", "u1", "prefs"], "color");
  assert.equal(await c.store.getItem(["users", "u1", "prefs"], "color"), null);

  await assert.rejects(c.store.putItem(["users"], "k", [1, 2]), /HTTP 400.*value: .*JSON object/);
  await assert.rejects(c.store.putItem([], "k", { a: 1 }), /HTTP 400.*namespace/);
});

// until polls check every 100ms until it is true, for at most ms.
async function until(check, ms) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

test("store: an item put with a ttl (minutes) expires for getItem, searchItems and listNamespaces", async () => {
  const c = client();
  await c.store.putItem(["ttl", "brief"], "k", { text: "short lived" }, { ttl: 0.02 }); // 1.2 seconds
  await c.store.putItem(["ttl", "kept"], "k", { text: "kept" }, { ttl: null });
  const first = await c.store.getItem(["ttl", "brief"], "k", { refreshTtl: false });
  assert.deepEqual(first.value, { text: "short lived" });
  assert.deepEqual(Object.keys(first).sort(), ["createdAt", "created_at", "key", "namespace", "updatedAt", "updated_at", "value"]);
  // Reads that do not refresh leave the expiry where it is: polling with
  // them sees the item go.
  const gone = await until(async () => (await c.store.getItem(["ttl", "brief"], "k", { refreshTtl: false })) === null, 10000);
  assert.ok(gone, "an item put with ttl 0.02 was still there 10s later");
  const found = await c.store.searchItems(["ttl"], { refreshTtl: false });
  assert.deepEqual(found.items.map((i) => i.namespace[1]), ["kept"]);
  assert.deepEqual((await c.store.listNamespaces({ prefix: ["ttl"] })).namespaces, [["ttl", "kept"]]);
  assert.deepEqual((await c.store.getItem(["ttl", "kept"], "k")).value, { text: "kept" });
});

test("store: reads refresh an item's ttl unless refreshTtl is false", async () => {
  const c = client();
  await c.store.putItem(["ttl", "read"], "k", { text: "read often" }, { ttl: 0.05 }); // 3 seconds
  const start = Date.now();
  for (let i = 0; Date.now() - start < 4500; i++) {
    // getItem refreshes by default, searchItems when asked.
    const read = i % 2 === 0
      ? await c.store.getItem(["ttl", "read"], "k")
      : (await c.store.searchItems(["ttl", "read"], { refreshTtl: true })).items[0];
    assert.ok(read, `the item expired ${Date.now() - start}ms after its put although it was read every 500ms`);
    await new Promise((r) => setTimeout(r, 500));
  }
  const gone = await until(async () => (await c.store.searchItems(["ttl", "read"], { refreshTtl: false })).items.length === 0, 10000);
  assert.ok(gone, "an item no longer read did not expire");
});

test("store: a ttl that is not a positive number of minutes is refused", async () => {
  const c = client();
  await assert.rejects(c.store.putItem(["ttl"], "k", { a: 1 }, { ttl: -1 }), /HTTP 400.*ttl must be a positive number of minutes/);
  await assert.rejects(c.store.putItem(["ttl"], "k", { a: 1 }, { ttl: 0 }), /HTTP 400.*ttl must be a positive number of minutes/);
  assert.equal(await c.store.getItem(["ttl"], "k"), null);
});

test("store: an item put through one replica is found through another", { skip: !replicaUrl && "DAWN_REPLICA_URL is not set" }, async () => {
  const a = client();
  const b = client(replicaUrl);
  await a.store.putItem(["memories", "shared"], "m1", { text: "The deploy window is Friday at noon" });
  const found = await b.store.searchItems(["memories"], { query: "deploy window" });
  assert.deepEqual(found.items.map((i) => [i.namespace, i.key, i.value.text]), [[["memories", "shared"], "m1", "The deploy window is Friday at noon"]]);
  assert.deepEqual((await b.store.listNamespaces({ prefix: ["memories"] })).namespaces, [["memories", "shared"]]);
  await b.store.deleteItem(["memories", "shared"], "m1");
  assert.equal(await a.store.getItem(["memories", "shared"], "m1"), null);
});
