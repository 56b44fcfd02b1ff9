/* cks_pycall.c: the repeated-signature torch call in C (issue 15).
 *
 * What runtime/fastpath.py does for a call whose signature the full path prepared, without the
 * Python: read the tensors through DLPack's C exchange table (torch's
 * `__dlpack_c_exchange_api__`: pointer, shape, strides, dtype, device in ~50 ns, no capsule),
 * find the prepared entry by the signature, allocate the output with torch's own `empty_like`,
 * re-check what depends on the pointers (overlap with `out`, alignment), take torch's current
 * stream and the stream's workspace, and call the variant's C entry point with the CksArgs.
 * Anything it does not handle returns None, and the op goes on in Python exactly as before:
 * the Python fast path, then the full path (which raises, pads or re-plans).
 *
 * One state per op (a capsule), built by cks_pycall_make() (called once through ctypes.PyDLL):
 * it returns (call, register, clear, workspace_changed, stats), builtins bound to that state.
 * Entries are registered by the Python side when it prepares a signature (fastpath.remember),
 * with the tensors of that call: the key is read from them here, by the same code as a call's.
 * The table is emptied whenever the op's prepared-signature cache or plan cache is (their
 * `on_clear` hooks), so an entry never outlives the Prepared it mirrors; the workspace's blocks
 * are re-read after any change to the library's workspace (`workspace_changed`).
 *
 * Everything runs with the GIL held (nothing here releases it): registration, clearing and calls
 * never interleave mid-way, and a workspace block cannot be replaced between its read and the
 * launch. Python is called back only to allocate the output, for a stand-in platform's stream,
 * to look up a stream's workspace and to raise a launch error; an entry is held (a reference
 * to its capsule) across those.
 *
 * Built by `cutlass-splitk build` beside the op libraries (build.py, Py_LIMITED_API: one binary
 * for every CPython >= 3.9), loaded by runtime/native.py when torch publishes the table. */
#define Py_LIMITED_API 0x03090000
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "cks_abi.h"
#include "cks_dlpack.h"

#define CKS_EXPORT __attribute__((visibility("default")))

enum {
  MAX_DIMS = 4,        /* a, b, c, e: 2-D; bias 1-D; out up to 4-D (head_split) */
  MAX_KW = 12,         /* keyword arguments of a call handled here */
  MAX_TYPES = 4,       /* tensor types accepted (torch.Tensor, torch.nn.Parameter) */
  SLOTS = 1024,        /* open addressing, linear probing; power of two */
  MAX_ENTRIES = 512,   /* the Python cache holds at most 256 signatures */
};

enum Role { ROLE_VALUE = 0, ROLE_C, ROLE_BIAS, ROLE_E, ROLE_OUT };

/* What a signature keys on for one tensor (zero-filled, so it compares and hashes as bytes). */
typedef struct {
  int32_t ndim, dev_type, dev_id;
  uint8_t code, bits;
  uint16_t lanes;
  int64_t shape[MAX_DIMS], strides[MAX_DIMS];
} Meta;

typedef struct {
  PyObject* name;   /* str */
  int role;         /* an operand tensor's role, or ROLE_VALUE */
  int is_tensor;
  Meta meta;
  PyObject* type;   /* ROLE_VALUE: the value's type and the value */
  PyObject* value;
} Slot;

typedef int (*RunFn)(const void* args, void* stream);

typedef struct {
  uint64_t hash;
  Meta a, b;
  int nkw;
  Slot kw[MAX_KW];
  CksArgs args;          /* pointers and workspace filled per call */
  RunFn run;
  PyObject* run_obj;     /* bound.run[variant] when registered: a replaced entry point declines */
  PyObject* variant;
  PyObject* prep;        /* the Python Prepared (for the error raised on a failed launch) */
  PyObject* template_;   /* the output is empty_like(template_) */
  PyObject* device;      /* the workspace's key */
  int device_index, use_c, bias_aligned, c_may_alias_out;
  uint64_t align;
  int64_t spans[6];      /* a, b, c, bias, e, d: bytes each spans (0: absent) */
  int64_t need_sem, need_part;
  /* the workspace last used: valid for ws_stream while the state's epoch is ws_epoch */
  int ws_valid;
  void* ws_stream;
  uint64_t ws_epoch;
  void* sem;
  int64_t sem_bytes;
  void* part;
  int64_t part_bytes;
} Entry;

typedef struct {
  const CksDLPackExchangeAPI* api;
  PyObject* api_capsule;
  PyTypeObject* types[MAX_TYPES];
  int ntypes;
  PyObject* tensor_types;
  PyObject* empty_like;
  PyObject* stream_fn;      /* None: the exchange table's current stream */
  PyObject* workspace_get;  /* (device, stream) -> the stream's buffers or None */
  PyObject* fail;           /* (prep, status, args bytes) -> raises */
  PyObject* bound;          /* .run is read per call */
  PyObject* run_name;       /* "run" */
  PyObject* sem_name;       /* "semaphores" */
  PyObject* part_name;      /* "partials" */
  uint64_t ws_epoch;
  long count, hits, declines;
  PyObject* slots[SLOTS];   /* entry capsules */
} State;

static const char* STATE_NAME = "cutlass_splitk.pycall.state";
static const char* ENTRY_NAME = "cutlass_splitk.pycall.entry";

/* --- keys ------------------------------------------------------------------------------- */

static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdULL;
}

static uint64_t hash_meta(uint64_t h, const Meta* m) {
  const uint64_t* w = (const uint64_t*)m;
  for (size_t i = 0; i < sizeof(Meta) / 8; ++i) h = mix(h, w[i]);
  return h;
}

static int is_tensor(const State* st, PyObject* o) {
  PyTypeObject* t = Py_TYPE(o);
  for (int i = 0; i < st->ntypes; ++i)
    if (t == st->types[i]) return 1;
  return 0;
}

/* The tensor's key and element pointer; -1 (no Python error left) where it cannot be read. */
static int read_tensor(const State* st, PyObject* o, Meta* m, uintptr_t* ptr) {
  CksDLTensor t;
  if (st->api->dltensor_from_py_object_no_sync(o, &t) != 0) {
    PyErr_Clear();
    return -1;
  }
  if (t.ndim < 0 || t.ndim > MAX_DIMS) return -1;
  memset(m, 0, sizeof *m);
  m->ndim = t.ndim;
  m->dev_type = t.device.device_type;
  m->dev_id = t.device.device_id;
  m->code = t.dtype.code;
  m->bits = t.dtype.bits;
  m->lanes = t.dtype.lanes;
  int64_t stride = 1;
  for (int i = t.ndim - 1; i >= 0; --i) {
    m->shape[i] = t.shape[i];
    m->strides[i] = t.strides ? t.strides[i] : stride;
    stride *= t.shape[i];
  }
  *ptr = (uintptr_t)t.data + (uintptr_t)t.byte_offset;
  return 0;
}

static int role_of(PyObject* name) {
  static const char* names[] = {"c", "bias", "e", "out"};
  for (int i = 0; i < 4; ++i)
    if (PyUnicode_CompareWithASCIIString(name, names[i]) == 0) return ROLE_C + i;
  return ROLE_VALUE;
}

/* A plain keyword value (prepared.plain_key): int, float, bool, str, None, or a tuple of them. */
static int plain_scalar(PyObject* v) {
  return PyLong_CheckExact(v) || PyFloat_CheckExact(v) || PyBool_Check(v) || PyUnicode_CheckExact(v) ||
         v == Py_None;
}

static int plain(PyObject* v) {
  if (plain_scalar(v)) return 1;
  if (!PyTuple_CheckExact(v)) return 0;
  Py_ssize_t n = PyTuple_Size(v);
  for (Py_ssize_t i = 0; i < n; ++i)
    if (!plain_scalar(PyTuple_GetItem(v, i))) return 0;
  return 1;
}

/* One call's keyword arguments, read. */
typedef struct {
  PyObject* name;
  PyObject* value;
  int is_tensor;
  Meta meta;
  uintptr_t ptr;
} CallKw;

/* Reads a, b and the keywords and hashes them; -1: not a call handled here (no error set). */
static int read_call(const State* st, PyObject* a, PyObject* b, PyObject* kwargs, Meta* ma, uintptr_t* pa, Meta* mb,
                     uintptr_t* pb, CallKw* kw, int* nkw, uint64_t* hash) {
  if (!is_tensor(st, a) || !is_tensor(st, b)) return -1;
  if (read_tensor(st, a, ma, pa) || read_tensor(st, b, mb, pb)) return -1;
  uint64_t h = hash_meta(hash_meta(0x84222325cbf29ce4ULL, ma), mb);
  int n = 0;
  if (kwargs != NULL && kwargs != Py_None) {
    if (!PyDict_Check(kwargs)) return -1;
    Py_ssize_t pos = 0;
    PyObject *k, *v;
    while (PyDict_Next(kwargs, &pos, &k, &v)) {
      if (n == MAX_KW) return -1;
      CallKw* c = &kw[n++];
      c->name = k;
      c->value = v;
      Py_hash_t hk = PyObject_Hash(k);
      if (hk == -1) {
        PyErr_Clear();
        return -1;
      }
      h = mix(h, (uint64_t)hk);
      c->is_tensor = is_tensor(st, v);
      if (c->is_tensor) {
        if (read_tensor(st, v, &c->meta, &c->ptr)) return -1;
        h = hash_meta(h, &c->meta);
      } else {
        if (!plain(v)) return -1;
        Py_hash_t hv = PyObject_Hash(v);
        if (hv == -1) {
          PyErr_Clear();
          return -1;
        }
        h = mix(mix(h, (uint64_t)hv), (uint64_t)(uintptr_t)Py_TYPE(v));
      }
    }
  }
  *nkw = n;
  *hash = h;
  return 0;
}

static int same_name(PyObject* x, PyObject* y) {
  if (x == y) return 1;
  int r = PyObject_RichCompareBool(x, y, Py_EQ);
  if (r < 0) PyErr_Clear();
  return r == 1;
}

static int matches(const Entry* e, uint64_t h, const Meta* ma, const Meta* mb, const CallKw* kw, int nkw) {
  if (e->hash != h || e->nkw != nkw || memcmp(&e->a, ma, sizeof *ma) || memcmp(&e->b, mb, sizeof *mb)) return 0;
  for (int i = 0; i < nkw; ++i) {
    const Slot* s = &e->kw[i];
    if (s->is_tensor != kw[i].is_tensor || !same_name(s->name, kw[i].name)) return 0;
    if (s->is_tensor) {
      if (memcmp(&s->meta, &kw[i].meta, sizeof s->meta)) return 0;
    } else {
      if ((PyObject*)Py_TYPE(kw[i].value) != s->type) return 0;
      int r = PyObject_RichCompareBool(kw[i].value, s->value, Py_EQ);
      if (r != 1) {
        if (r < 0) PyErr_Clear();
        return 0;
      }
    }
  }
  return 1;
}

/* --- state and entries -------------------------------------------------------------------- */

static State* state_of(PyObject* self) { return (State*)PyCapsule_GetPointer(self, STATE_NAME); }
static Entry* entry_of(PyObject* cap) { return (Entry*)PyCapsule_GetPointer(cap, ENTRY_NAME); }

static void entry_free(PyObject* cap) {
  Entry* e = entry_of(cap);
  if (e == NULL) return;
  for (int i = 0; i < e->nkw; ++i) {
    Py_XDECREF(e->kw[i].name);
    Py_XDECREF(e->kw[i].type);
    Py_XDECREF(e->kw[i].value);
  }
  Py_XDECREF(e->run_obj);
  Py_XDECREF(e->variant);
  Py_XDECREF(e->prep);
  Py_XDECREF(e->template_);
  Py_XDECREF(e->device);
  PyMem_Free(e);
}

static void state_clear(State* st) {
  for (int i = 0; i < SLOTS; ++i) {
    PyObject* cap = st->slots[i];
    st->slots[i] = NULL;
    Py_XDECREF(cap);
  }
  st->count = 0;
}

static void state_free(PyObject* cap) {
  State* st = state_of(cap);
  if (st == NULL) return;
  state_clear(st);
  Py_XDECREF(st->api_capsule);
  Py_XDECREF(st->tensor_types);
  Py_XDECREF(st->empty_like);
  Py_XDECREF(st->stream_fn);
  Py_XDECREF(st->workspace_get);
  Py_XDECREF(st->fail);
  Py_XDECREF(st->bound);
  Py_XDECREF(st->run_name);
  Py_XDECREF(st->sem_name);
  Py_XDECREF(st->part_name);
  PyMem_Free(st);
}

/* The registered entry point of the entry's variant is still bound.run[variant]. */
static int entry_point_current(const State* st, const Entry* e) {
  PyObject* run = PyObject_GetAttr(st->bound, st->run_name);
  if (run == NULL) {
    PyErr_Clear();
    return 0;
  }
  int ok = PyDict_Check(run) && PyDict_GetItem(run, e->variant) == e->run_obj;
  Py_DECREF(run);
  return ok;
}

static int overlaps(const Entry* e, uintptr_t pa, uintptr_t pb, uintptr_t pc, uintptr_t pbias, uintptr_t pe,
                    uintptr_t pd) {
  const int64_t sa = e->spans[0], sb = e->spans[1], sc = e->spans[2], sbias = e->spans[3], se = e->spans[4],
                sd = e->spans[5];
  const uintptr_t end = pd + (uintptr_t)sd;
  if (!sd) return 0;
  return (sa && pa < end && pd < pa + sa) || (sb && pb < end && pd < pb + sb) ||
         (sbias && pbias < end && pd < pbias + sbias) || (se && pe < end && pd < pe + se) ||
         (sc && pc < end && pd < pc + sc && !(pc == pd && e->c_may_alias_out));
}

/* A Block (ptr, nbytes, owner) or None. */
static int read_block(PyObject* block, void** ptr, int64_t* nbytes) {
  if (block == Py_None) {
    *ptr = NULL;
    *nbytes = 0;
    return 0;
  }
  if (!PyTuple_Check(block) || PyTuple_Size(block) < 2) return -1;
  *ptr = PyLong_AsVoidPtr(PyTuple_GetItem(block, 0));
  *nbytes = PyLong_AsLongLong(PyTuple_GetItem(block, 1));
  if (PyErr_Occurred()) {
    PyErr_Clear();
    return -1;
  }
  return 0;
}

/* The stream's workspace into the entry; -1: none (the Python path allocates it), or an error set. */
static int workspace_of(State* st, Entry* e, void* stream) {
  if (e->ws_valid && e->ws_stream == stream && e->ws_epoch == st->ws_epoch) return 0;
  PyObject* s = PyLong_FromVoidPtr(stream);
  if (s == NULL) return -1;
  PyObject* bufs = PyObject_CallFunctionObjArgs(st->workspace_get, e->device, s, NULL);
  Py_DECREF(s);
  if (bufs == NULL) return -1;
  int rc = -1;
  if (bufs != Py_None) {
    PyObject* sem = PyObject_GetAttr(bufs, st->sem_name);
    PyObject* part = sem ? PyObject_GetAttr(bufs, st->part_name) : NULL;
    if (part != NULL && read_block(sem, &e->sem, &e->sem_bytes) == 0 &&
        read_block(part, &e->part, &e->part_bytes) == 0) {
      e->ws_valid = 1;
      e->ws_stream = stream;
      e->ws_epoch = st->ws_epoch;
      rc = 0;
    } else {
      PyErr_Clear();
    }
    Py_XDECREF(sem);
    Py_XDECREF(part);
  }
  Py_DECREF(bufs);
  return rc;
}

/* --- the call ------------------------------------------------------------------------------- */

/* call(a, b, kwargs_or_None) -> the output, or None: not handled here (the Python paths take it). */
static PyObject* pc_call(PyObject* self, PyObject* args) {
  State* st = state_of(self);
  PyObject *a, *b, *kwargs;
  if (st == NULL || !PyArg_UnpackTuple(args, "call", 3, 3, &a, &b, &kwargs)) return NULL;
  Meta ma, mb;
  uintptr_t pa, pb;
  CallKw kw[MAX_KW];
  int nkw;
  uint64_t h;
  if (read_call(st, a, b, kwargs, &ma, &pa, &mb, &pb, kw, &nkw, &h)) goto decline_nohold;
  PyObject* cap = NULL;
  for (size_t i = h & (SLOTS - 1);; i = (i + 1) & (SLOTS - 1)) {
    PyObject* c = st->slots[i];
    if (c == NULL) goto decline_nohold;
    if (matches(entry_of(c), h, &ma, &mb, kw, nkw)) {
      cap = c;
      break;
    }
  }
  Py_INCREF(cap);  /* held across the callbacks below: a clear() from another thread frees nothing we read */
  Entry* e = entry_of(cap);

  uintptr_t pc = 0, pbias = 0, pe = 0, pd = 0;
  PyObject* given = NULL;  /* the caller's out (borrowed) */
  PyObject* out = NULL;    /* what is returned (a new reference) */
  for (int i = 0; i < nkw; ++i) {
    if (!kw[i].is_tensor) continue;
    switch (e->kw[i].role) {
      case ROLE_C: pc = kw[i].ptr; break;
      case ROLE_BIAS: pbias = kw[i].ptr; break;
      case ROLE_E: pe = kw[i].ptr; break;
      case ROLE_OUT: pd = kw[i].ptr; given = kw[i].value; break;
    }
  }
  if (given != NULL) {
    if (overlaps(e, pa, pb, pc, pbias, pe, pd)) goto decline;
    out = given;
    Py_INCREF(out);
  } else {
    out = PyObject_CallFunctionObjArgs(st->empty_like, e->template_, NULL);
    if (out == NULL) goto error;
    Meta md;
    if (read_tensor(st, out, &md, &pd)) goto decline;
  }
  if (!e->use_c) pc = 0;  /* c is not read (beta == 0) */
  if ((pa | pb | pd | pe | pc | (e->bias_aligned ? pbias : 0)) % e->align) goto decline;

  void* stream = NULL;
  if (st->stream_fn != Py_None) {
    PyObject* s = PyObject_CallFunction(st->stream_fn, "i", e->device_index);
    if (s == NULL) goto error;
    stream = PyLong_AsVoidPtr(s);
    Py_DECREF(s);
    if (PyErr_Occurred()) goto error;
  } else if (ma.dev_type == CKS_DL_CUDA) {
    if (st->api->current_work_stream(CKS_DL_CUDA, ma.dev_id, &stream) != 0) goto error;
  }

  CksArgs call = e->args;
  if (e->need_sem || e->need_part) {
    if (workspace_of(st, e, stream)) {
      if (PyErr_Occurred()) goto error;
      goto decline;
    }
    if ((e->need_sem && (e->sem == NULL || e->sem_bytes < e->need_sem)) ||
        (e->need_part && (e->part == NULL || e->part_bytes < e->need_part)))
      goto decline;
    if (e->need_sem) {
      call.semaphores = e->sem;
      call.semaphore_bytes = e->sem_bytes;
    }
    if (e->need_part) {
      call.partials = e->part;
      call.partial_bytes = e->part_bytes;
    }
  }
  if (!entry_point_current(st, e)) goto decline;
  call.a = (const void*)pa;
  call.b = (const void*)pb;
  call.c = (const void*)pc;
  call.bias = (const void*)pbias;
  call.e = (const void*)pe;
  call.d = (void*)pd;
  int status = e->run(&call, stream);
  if (status == 0) {
    st->hits++;
    Py_DECREF(cap);
    return out;
  }
  if (status == CKS_ERROR_INVALID_PROBLEM) goto decline;
  {
    PyObject* raw = PyBytes_FromStringAndSize((const char*)&call, sizeof call);
    PyObject* code = PyLong_FromLong(status);
    if (raw != NULL && code != NULL) {
      PyObject* r = PyObject_CallFunctionObjArgs(st->fail, e->prep, code, raw, NULL);
      Py_XDECREF(r);
      if (r != NULL && !PyErr_Occurred())
        PyErr_Format(PyExc_RuntimeError, "cutlass_splitk: launch failed with status %d", status);
    }
    Py_XDECREF(raw);
    Py_XDECREF(code);
  }
error:
  Py_XDECREF(out);
  Py_DECREF(cap);
  return NULL;
decline:
  Py_XDECREF(out);  /* an output allocated here is dropped; the caller's is not touched */
  Py_DECREF(cap);
decline_nohold:
  st->declines++;
  Py_RETURN_NONE;
}

/* --- registration ---------------------------------------------------------------------------- */

/* register(a, b, kwargs_or_None, args_bytes, run_obj, run_address, variant, prep, template, device,
 *          device_index, use_c, bias_aligned, c_may_alias_out, align, spans(6), need_sem, need_part)
 * -> True, or False where the call cannot be handled here (its keywords, a full table). */
static PyObject* pc_register(PyObject* self, PyObject* args) {
  State* st = state_of(self);
  PyObject *a, *b, *kwargs, *run_obj, *variant, *prep, *template_, *device, *spans;
  const char* raw;
  Py_ssize_t raw_len;
  unsigned long long run_address, align;
  int device_index, use_c, bias_aligned, c_may_alias_out;
  long long need_sem, need_part;
  if (st == NULL ||
      !PyArg_ParseTuple(args, "OOOy#OKOOOOiiiiKOLL", &a, &b, &kwargs, &raw, &raw_len, &run_obj, &run_address,
                        &variant, &prep, &template_, &device, &device_index, &use_c, &bias_aligned,
                        &c_may_alias_out, &align, &spans, &need_sem, &need_part))
    return NULL;
  if (raw_len != (Py_ssize_t)sizeof(CksArgs)) {
    PyErr_Format(PyExc_ValueError, "CksArgs is %zd bytes here, %zd given", (Py_ssize_t)sizeof(CksArgs), raw_len);
    return NULL;
  }
  if (!PyTuple_Check(spans) || PyTuple_Size(spans) != 6 || align == 0 || run_address == 0) {
    PyErr_SetString(PyExc_ValueError, "register: spans must be 6 integers, align and the entry point non-zero");
    return NULL;
  }
  Meta ma, mb;
  uintptr_t pa, pb;
  CallKw kw[MAX_KW];
  int nkw;
  uint64_t h;
  if (template_ == Py_None || st->count >= MAX_ENTRIES ||
      read_call(st, a, b, kwargs, &ma, &pa, &mb, &pb, kw, &nkw, &h))
    Py_RETURN_FALSE;
  for (int i = 0; i < nkw; ++i) {
    int role = role_of(kw[i].name);
    if (kw[i].is_tensor != (role != ROLE_VALUE)) Py_RETURN_FALSE;  /* a tensor outside c/bias/e/out */
  }
  Entry* e = (Entry*)PyMem_Calloc(1, sizeof(Entry));
  if (e == NULL) return PyErr_NoMemory();
  PyObject* cap = PyCapsule_New(e, ENTRY_NAME, entry_free);
  if (cap == NULL) {
    PyMem_Free(e);
    return NULL;
  }
  e->hash = h;
  e->a = ma;
  e->b = mb;
  e->nkw = nkw;
  for (int i = 0; i < nkw; ++i) {
    Slot* s = &e->kw[i];
    s->name = kw[i].name;
    Py_INCREF(s->name);
    s->role = role_of(kw[i].name);
    s->is_tensor = kw[i].is_tensor;
    if (s->is_tensor) {
      s->meta = kw[i].meta;
    } else {
      s->type = (PyObject*)Py_TYPE(kw[i].value);
      s->value = kw[i].value;
      Py_INCREF(s->type);
      Py_INCREF(s->value);
    }
  }
  memcpy(&e->args, raw, sizeof e->args);
  e->run = (RunFn)(uintptr_t)run_address;
  e->run_obj = run_obj;
  e->variant = variant;
  e->prep = prep;
  e->template_ = template_;
  e->device = device;
  Py_INCREF(run_obj);
  Py_INCREF(variant);
  Py_INCREF(prep);
  Py_INCREF(template_);
  Py_INCREF(device);
  e->device_index = device_index;
  e->use_c = use_c;
  e->bias_aligned = bias_aligned;
  e->c_may_alias_out = c_may_alias_out;
  e->align = align;
  for (int i = 0; i < 6; ++i) e->spans[i] = PyLong_AsLongLong(PyTuple_GetItem(spans, i));
  e->need_sem = need_sem;
  e->need_part = need_part;
  if (PyErr_Occurred()) {
    Py_DECREF(cap);
    return NULL;
  }
  /* the same signature registered again (a re-prepared call) replaces the old entry */
  size_t i = h & (SLOTS - 1);
  for (; st->slots[i] != NULL; i = (i + 1) & (SLOTS - 1)) {
    if (matches(entry_of(st->slots[i]), h, &ma, &mb, kw, nkw)) break;
  }
  PyObject* old = st->slots[i];
  st->slots[i] = cap;
  if (old == NULL) st->count++;
  Py_XDECREF(old);
  Py_RETURN_TRUE;
}

static PyObject* pc_clear(PyObject* self, PyObject* unused) {
  (void)unused;
  State* st = state_of(self);
  if (st == NULL) return NULL;
  state_clear(st);
  Py_RETURN_NONE;
}

static PyObject* pc_workspace_changed(PyObject* self, PyObject* unused) {
  (void)unused;
  State* st = state_of(self);
  if (st == NULL) return NULL;
  st->ws_epoch++;
  Py_RETURN_NONE;
}

/* stats() -> (entries, calls launched here, calls declined) */
static PyObject* pc_stats(PyObject* self, PyObject* unused) {
  (void)unused;
  State* st = state_of(self);
  if (st == NULL) return NULL;
  return Py_BuildValue("(lll)", st->count, st->hits, st->declines);
}

static PyMethodDef METHODS[] = {
    {"call", pc_call, METH_VARARGS, "call(a, b, kwargs) -> output, or None for the Python paths"},
    {"register", pc_register, METH_VARARGS, "register a prepared signature"},
    {"clear", pc_clear, METH_NOARGS, "forget every registered signature"},
    {"workspace_changed", pc_workspace_changed, METH_NOARGS, "re-read the workspace on the next call"},
    {"stats", pc_stats, METH_NOARGS, "(entries, launched, declined)"},
};

/* cks_pycall_make((api_capsule, tensor_types, empty_like, stream_fn_or_None, workspace_get, fail, bound))
 * -> (call, register, clear, workspace_changed, stats); NULL with a Python error set. */
CKS_EXPORT PyObject* cks_pycall_make(PyObject* settings) {
  PyObject *api_capsule, *types, *empty_like, *stream_fn, *workspace_get, *fail, *bound;
  if (!PyArg_ParseTuple(settings, "OOOOOOO", &api_capsule, &types, &empty_like, &stream_fn, &workspace_get, &fail,
                        &bound))
    return NULL;
  const CksDLPackExchangeAPI* api =
      (const CksDLPackExchangeAPI*)PyCapsule_GetPointer(api_capsule, CKS_DLPACK_EXCHANGE_CAPSULE);
  if (api == NULL) return NULL;
  if (api->header.version.major != CKS_DLPACK_MAJOR || api->dltensor_from_py_object_no_sync == NULL ||
      api->current_work_stream == NULL) {
    PyErr_Format(PyExc_RuntimeError, "DLPack exchange table %u.%u without the functions read here",
                 api->header.version.major, api->header.version.minor);
    return NULL;
  }
  if (!PyTuple_Check(types) || PyTuple_Size(types) < 1 || PyTuple_Size(types) > MAX_TYPES) {
    PyErr_SetString(PyExc_TypeError, "tensor_types: a tuple of 1 to 4 types");
    return NULL;
  }
  State* st = (State*)PyMem_Calloc(1, sizeof(State));
  if (st == NULL) return PyErr_NoMemory();
  PyObject* cap = PyCapsule_New(st, STATE_NAME, state_free);  /* frees st and what it holds */
  if (cap == NULL) {
    PyMem_Free(st);
    return NULL;
  }
  st->api = api;
  st->ntypes = (int)PyTuple_Size(types);
  for (int i = 0; i < st->ntypes; ++i) st->types[i] = (PyTypeObject*)PyTuple_GetItem(types, i);
  PyObject* held[] = {api_capsule, types, empty_like, stream_fn, workspace_get, fail, bound};
  for (size_t i = 0; i < sizeof held / sizeof *held; ++i) Py_INCREF(held[i]);
  st->api_capsule = api_capsule;
  st->tensor_types = types;
  st->empty_like = empty_like;
  st->stream_fn = stream_fn;
  st->workspace_get = workspace_get;
  st->fail = fail;
  st->bound = bound;
  st->run_name = PyUnicode_InternFromString("run");
  st->sem_name = PyUnicode_InternFromString("semaphores");
  st->part_name = PyUnicode_InternFromString("partials");
  if (st->run_name == NULL || st->sem_name == NULL || st->part_name == NULL) {
    Py_DECREF(cap);
    return NULL;
  }
  const int n = (int)(sizeof METHODS / sizeof *METHODS);
  PyObject* fns = PyTuple_New(n);
  for (int i = 0; fns != NULL && i < n; ++i) {
    PyObject* f = PyCFunction_NewEx(&METHODS[i], cap, NULL);
    if (f == NULL) {
      Py_CLEAR(fns);
      break;
    }
    PyTuple_SetItem(fns, i, f);
  }
  Py_DECREF(cap);
  return fns;
}
