#!/usr/bin/env python3
"""rockdoc from Python: inserts, indexes, queries and aggregates in process,
with pymongo's API, then exits 0 (the install check, python_binding_install,
runs it in a fresh virtualenv after `pip install ./bindings/python`).

    python3 quickstart.py [DIR]      # default: an in-memory database

A DIR must not exist yet (or be empty): the example makes its database there
and leaves it. It never deletes a directory it was given, and refuses one that
holds something (tests/python_example_keeps_directory.cmake checks both).
"""
import os
import sys

import rockdoc
from pymongo.errors import DuplicateKeyError


def main(path):
    with rockdoc.MongoClient(path) as client:
        orders = client["shop"]["orders"]
        orders.insert_many([{"_id": i, "sku": "sku%d" % (i % 3), "qty": i} for i in range(10)])
        assert orders.create_index("sku") == "sku_1"
        orders.create_index([("sku", rockdoc.ASCENDING), ("qty", rockdoc.DESCENDING)],
                            name="sku_qty")
        big = list(orders.find({"sku": "sku1"}, {"_id": 0, "qty": 1}).sort("qty", -1).limit(2))
        assert big == [{"qty": 7}, {"qty": 4}], big
        plan = orders.find({"sku": "sku1"}).explain()["queryPlanner"]["winningPlan"]
        totals = list(orders.aggregate([{"$group": {"_id": "$sku", "qty": {"$sum": "$qty"}}},
                                        {"$sort": {"_id": 1}}]))
        assert totals == [{"_id": "sku0", "qty": 18}, {"_id": "sku1", "qty": 12},
                          {"_id": "sku2", "qty": 15}], totals
        try:
            orders.insert_one({"_id": 1})
            raise AssertionError("a duplicate _id was accepted")
        except DuplicateKeyError as e:
            assert e.code == 11000
        print("indexed plan:", plan.get("stage"), plan.get("inputStage", {}).get("indexName"))
        print("totals:", totals)
    print("quickstart: all steps passed")


if __name__ == "__main__":
    path = sys.argv[1] if len(sys.argv) > 1 else ":memory:"
    if path != ":memory:" and os.path.isdir(path) and os.listdir(path):
        sys.exit("quickstart: %s is not empty; give a new directory (this example never "
                 "deletes a directory it is given)" % path)
    main(path)
