#!/usr/bin/env python3
"""pymongo against rockdoc-serve with text indexes (issue 39): create_index
with pymongo.TEXT, weights and default_language, index_information's shape,
$text with {"$meta": "textScore"} in the projection and the sort (the scores
the MongoDB manual shows for its articles example), explain's TEXT_MATCH, and
the error codes of misuse (a second text index, $text without one).

    pymongo_text_test.py URI      (run by run_with_server.py)

Exits 77 (a CTest skip) when pymongo is not installed.
"""
import sys

from pymongo_harness import pymongo, expect_code, run_tests, test  # exits 77 without pymongo

client = pymongo.MongoClient(sys.argv[1], serverSelectionTimeoutMS=5000)
db = client.pymongo_text

ARTICLES = [
    {"_id": 1, "subject": "coffee", "author": "xyz", "views": 50},
    {"_id": 2, "subject": "Coffee Shopping", "author": "efg", "views": 5},
    {"_id": 3, "subject": "Baking a cake", "author": "abc", "views": 90},
    {"_id": 4, "subject": "baking", "author": "xyz", "views": 100},
    {"_id": 5, "subject": "Café Con Leche", "author": "abc", "views": 200},
    {"_id": 6, "subject": "Сырники", "author": "jkl", "views": 80},
    {"_id": 7, "subject": "coffee and cream", "author": "efg", "views": 10},
    {"_id": 8, "subject": "Cafe con Leche", "author": "xyz", "views": 10},
]


def articles():
    c = db.articles
    c.drop()
    c.insert_many(ARTICLES)
    assert c.create_index([("subject", pymongo.TEXT)]) == "subject_text"
    return c


@test
def text_search_with_scores():
    c = articles()
    info = c.index_information()["subject_text"]
    assert info["key"] == [("_fts", "text"), ("_ftsx", 1)], info
    assert info["weights"] == {"subject": 1} and info["textIndexVersion"] == 3, info
    got = list(c.find({"$text": {"$search": "coffee"}}, {"score": {"$meta": "textScore"}})
               .sort([("score", {"$meta": "textScore"})]))
    assert [d["_id"] for d in got][0] == 1, got
    assert sorted(d["_id"] for d in got[1:]) == [2, 7], got
    assert [d["score"] for d in got] == [1.0, 0.75, 0.75], got
    assert sorted(d["_id"] for d in c.find({"$text": {"$search": "coffee -shop"}})) == [1, 7]
    assert [d["_id"] for d in c.find({"$text": {"$search": "\"coffee shop\""}})] == [2]
    assert sorted(d["_id"] for d in c.find({"$text": {"$search": "leche", "$language": "es"}})) \
        == [5, 8]
    assert c.count_documents({"$text": {"$search": "cake"}}) == 1
    plan = c.find({"$text": {"$search": "cake"}}).explain()["queryPlanner"]["winningPlan"]
    assert plan["stage"] == "TEXT_MATCH" and plan["inputStage"]["stage"] == "TEXT_OR", plan


@test
def misuse_has_mongodbs_codes():
    c = articles()
    expect_code(85, lambda: c.create_index([("author", pymongo.TEXT)]))
    db.plain.drop()
    db.plain.insert_one({"a": "x"})
    expect_code(27, lambda: list(db.plain.find({"$text": {"$search": "x"}})))
    expect_code(40218, lambda: list(db.plain.find({}, {"s": {"$meta": "textScore"}})))
    expect_code(2, lambda: list(c.find({"$or": [{"$text": {"$search": "x"}}, {"a": 1}]})))


@test
def weights_and_languages():
    c = db.blog
    c.drop()
    c.insert_many([{"_id": 1, "content": "coffee", "keywords": ["tea"]},
                   {"_id": 2, "content": "tea", "keywords": ["coffee"]}])
    c.create_index([("content", pymongo.TEXT), ("keywords", pymongo.TEXT)],
                   weights={"content": 10, "keywords": 5}, default_language="english",
                   name="TextIndex")
    got = list(c.find({"$text": {"$search": "coffee"}}, {"score": {"$meta": "textScore"}})
               .sort([("score", {"$meta": "textScore"})]))
    assert [(d["_id"], d["score"]) for d in got] == [(1, 10.0), (2, 5.0)], got


run_tests()
