// The lab's embedded blog post grown to thousands of comments, a product
// catalog with bloated documents, and the 10-index variant plus one.
const blog = db.getSiblingDB("blog");
for (let p = 0; p < 20; p++) {
  const comments = [];
  const n = p === 0 ? 3000 : 5 + p;
  for (let i = 0; i < n; i++) comments.push({author: "user" + (i % 50), text: "comment " + i, date: new Date(1700000000000 + i * 60000)});
  blog.posts.insertOne({_id: p, title: "post " + p, comments: comments});
}
const shop = db.getSiblingDB("shop");
const big = "x".repeat(1200000);
for (let i = 0; i < 30; i++) shop.products.insertOne({_id: i, name: "p" + i, price: i, stock: 10, description: big});
shop.products.createIndex({name: 1});
shop.products.createIndex({name: 1, price: 1});
const ev = db.getSiblingDB("events");
ev.log.insertOne({_id: 1});
for (let i = 0; i < 11; i++) { const k = {}; k["f" + i] = 1; ev.log.createIndex(k); }
