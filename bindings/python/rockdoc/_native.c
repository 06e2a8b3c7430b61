/* rockdoc._native: the Python package's only native code, a thin CPython
 * extension over rockdoc's C API (include/rockdoc/c.h). It has one type,
 * Handle (an open database directory), with command() (a BSON command in,
 * the BSON reply out, through rockdoc_run_command) and close(). Everything
 * else, pymongo's API, is Python (rockdoc/__init__.py) mapped onto MongoDB
 * commands as pymongo maps it, so that the binding accepts and refuses
 * exactly what the command layer does.
 *
 * The GIL is released during every engine call (rockdoc_open, _run_command,
 * _close): a client is thread-safe, so many Python threads may run commands
 * at once. close() while other threads are inside command() defers the
 * engine's close to the last of them (`busy` counts them; it is read and
 * written with the GIL held). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "rockdoc/c.h"

static PyObject* NativeError; /* rockdoc._native.Error(code, message) */

typedef struct {
  PyObject_HEAD
  rockdoc_client_t* client; /* NULL once closed */
  int busy;                 /* threads inside an engine call */
  int close_requested;      /* close() came while busy */
} Handle;

static PyObject* RaiseError(rockdoc_error_t* err) {
  PyObject* args = Py_BuildValue("(is)", (int)err->code, err->message ? err->message : "");
  rockdoc_error_clear(err);
  if (args) {
    PyErr_SetObject(NativeError, args);
    Py_DECREF(args);
  }
  return NULL;
}

/* Closes the engine's client with the GIL released; returns 1, or 0 with
 * *err set. */
static int CloseClient(rockdoc_client_t* client, rockdoc_error_t* err) {
  int ok;
  Py_BEGIN_ALLOW_THREADS
  ok = rockdoc_close(client, err);
  Py_END_ALLOW_THREADS
  return ok;
}

static PyObject* HandleNew(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  static char* kwlist[] = {"path", "create_if_missing", "sync", "change_log",
                           "block_cache_bytes", NULL};
  const char* path = NULL;
  int create_if_missing = 1, sync = 0, change_log = 0;
  unsigned long long cache_bytes = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "s|pppK", kwlist, &path, &create_if_missing,
                                   &sync, &change_log, &cache_bytes)) {
    return NULL;
  }
  Handle* self = (Handle*)type->tp_alloc(type, 0);
  if (!self) return NULL;
  rockdoc_options_t* options = rockdoc_options_create();
  if (!options) {
    Py_DECREF(self);
    return PyErr_NoMemory();
  }
  rockdoc_options_set_create_if_missing(options, create_if_missing);
  rockdoc_options_set_sync(options, sync);
  rockdoc_options_set_change_log(options, change_log);
  if (cache_bytes) rockdoc_options_set_block_cache_bytes(options, (size_t)cache_bytes);
  rockdoc_error_t err = ROCKDOC_ERROR_INIT;
  rockdoc_client_t* client;
  Py_BEGIN_ALLOW_THREADS
  client = rockdoc_open(path, options, &err);
  Py_END_ALLOW_THREADS
  rockdoc_options_destroy(options);
  if (!client) {
    Py_DECREF(self);
    return RaiseError(&err);
  }
  self->client = client;
  return (PyObject*)self;
}

static void HandleDealloc(Handle* self) {
  /* Not busy here: a thread inside command() holds a reference. */
  if (self->client) {
    rockdoc_error_t err = ROCKDOC_ERROR_INIT;
    CloseClient(self->client, &err);
    rockdoc_error_clear(&err);
    self->client = NULL;
  }
  Py_TYPE(self)->tp_free((PyObject*)self);
}

/* command(db: str, command: bytes, batch=False) -> bytes: the reply,
 * whatever its ok (the Python layer maps ok: 0 onto pymongo's exceptions by
 * code). batch: a write carrying a driver's batch, up to a message's size
 * (rockdoc_run_batch_command). Bad arguments, with no reply, raise
 * Error(code, message). */
static PyObject* HandleCommand(Handle* self, PyObject* args) {
  const char* db = NULL;
  Py_buffer command;
  int batch = 0;
  if (!PyArg_ParseTuple(args, "sy*|p", &db, &command, &batch)) return NULL;
  if (!self->client || self->close_requested) {
    PyBuffer_Release(&command);
    PyErr_SetObject(NativeError, Py_BuildValue("(is)", 20, "the client is closed"));
    return NULL;
  }
  uint8_t* reply = NULL;
  size_t reply_len = 0;
  rockdoc_error_t err = ROCKDOC_ERROR_INIT;
  rockdoc_client_t* client = self->client;
  self->busy++;
  Py_BEGIN_ALLOW_THREADS
  if (batch) {
    rockdoc_run_batch_command(client, db, (const uint8_t*)command.buf, (size_t)command.len,
                              &reply, &reply_len, &err);
  } else {
    rockdoc_run_command(client, db, (const uint8_t*)command.buf, (size_t)command.len, &reply,
                        &reply_len, &err);
  }
  Py_END_ALLOW_THREADS
  self->busy--;
  PyBuffer_Release(&command);
  if (self->close_requested && self->busy == 0 && self->client) {
    rockdoc_error_t close_err = ROCKDOC_ERROR_INIT;
    self->client = NULL;
    CloseClient(client, &close_err);
    rockdoc_error_clear(&close_err);
  }
  if (!reply) return RaiseError(&err);
  rockdoc_error_clear(&err);
  PyObject* out = PyBytes_FromStringAndSize((const char*)reply, (Py_ssize_t)reply_len);
  rockdoc_free(reply);
  return out;
}

/* close(): closes the directory (idempotent). When other threads are inside
 * command(), the last of them closes it; new commands are refused at once. */
static PyObject* HandleClose(Handle* self, PyObject* unused) {
  (void)unused;
  if (!self->client) Py_RETURN_NONE;
  if (self->busy > 0) {
    self->close_requested = 1;
    Py_RETURN_NONE;
  }
  rockdoc_client_t* client = self->client;
  self->client = NULL;
  rockdoc_error_t err = ROCKDOC_ERROR_INIT;
  if (!CloseClient(client, &err)) return RaiseError(&err);
  Py_RETURN_NONE;
}

static PyObject* HandleClosed(Handle* self, void* unused) {
  (void)unused;
  return PyBool_FromLong(self->client == NULL || self->close_requested);
}

static PyMethodDef kHandleMethods[] = {
    {"command", (PyCFunction)HandleCommand, METH_VARARGS,
     "command(db, bson_bytes, batch=False) -> reply bytes (the GIL released meanwhile)"},
    {"close", (PyCFunction)HandleClose, METH_NOARGS, "closes the database directory"},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef kHandleGetSet[] = {
    {"closed", (getter)HandleClosed, NULL, "True once close() was called", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject HandleType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "rockdoc._native.Handle",
    .tp_basicsize = sizeof(Handle),
    .tp_dealloc = (destructor)HandleDealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Handle(path, create_if_missing=True, sync=False, change_log=False, "
              "block_cache_bytes=0): an open rockdoc directory",
    .tp_methods = kHandleMethods,
    .tp_getset = kHandleGetSet,
    .tp_new = HandleNew,
};

static PyObject* Version(PyObject* self, PyObject* unused) {
  (void)self;
  (void)unused;
  return PyUnicode_FromString(rockdoc_version());
}

static PyMethodDef kModuleMethods[] = {
    {"version", Version, METH_NOARGS, "the engine's version"}, {NULL, NULL, 0, NULL}};

static struct PyModuleDef kModule = {
    PyModuleDef_HEAD_INIT,
    .m_name = "rockdoc._native",
    .m_doc = "rockdoc's C API for the rockdoc package",
    .m_size = -1,
    .m_methods = kModuleMethods,
};

PyMODINIT_FUNC PyInit__native(void) {
  if (PyType_Ready(&HandleType) < 0) return NULL;
  PyObject* m = PyModule_Create(&kModule);
  if (!m) return NULL;
  NativeError = PyErr_NewException("rockdoc._native.Error", NULL, NULL);
  if (!NativeError || PyModule_AddObject(m, "Error", NativeError) < 0) {
    Py_XDECREF(NativeError);
    Py_DECREF(m);
    return NULL;
  }
  Py_INCREF(&HandleType);
  if (PyModule_AddObject(m, "Handle", (PyObject*)&HandleType) < 0) {
    Py_DECREF(&HandleType);
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
