"""bulk_write's UpdateOne and ReplaceOne with `sort` (MongoDB 8.0's
update-one sort, in pymongo since 4.11). With a pymongo that has it these
are pymongo's own classes; with an older one, subclasses that add the
argument and hand it to the bulk (rockdoc's _Bulk takes it; an older
pymongo's own bulk refuses it with TypeError, never drops it)."""
from pymongo import operations as _ops


def _has_sort(cls, *args):
    try:
        cls(*args, sort={"_id": 1})
        return True
    except TypeError:
        return False


if _has_sort(_ops.UpdateOne, {}, {"$set": {"a": 1}}):
    UpdateOne = _ops.UpdateOne
else:
    class UpdateOne(_ops.UpdateOne):
        __doc__ = _ops.UpdateOne.__doc__

        def __init__(self, filter, update, upsert=False, collation=None, array_filters=None,
                     hint=None, sort=None):
            super().__init__(filter, update, upsert, collation, array_filters, hint)
            self._sort = sort

        def _add_to_bulk(self, bulkobj):
            if self._sort is None:
                return super()._add_to_bulk(bulkobj)
            bulkobj.add_update(self._filter, self._doc, False, self._upsert,
                               collation=self._collation, array_filters=self._array_filters,
                               hint=self._hint, sort=self._sort)

if _has_sort(_ops.ReplaceOne, {}, {"a": 1}):
    ReplaceOne = _ops.ReplaceOne
else:
    class ReplaceOne(_ops.ReplaceOne):
        __doc__ = _ops.ReplaceOne.__doc__

        def __init__(self, filter, replacement, upsert=False, collation=None, hint=None,
                     sort=None):
            super().__init__(filter, replacement, upsert, collation, hint)
            self._sort = sort

        def _add_to_bulk(self, bulkobj):
            if self._sort is None:
                return super()._add_to_bulk(bulkobj)
            bulkobj.add_replace(self._filter, self._doc, self._upsert,
                                collation=self._collation, hint=self._hint, sort=self._sort)
