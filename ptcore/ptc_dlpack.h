/* DLPack ABI (https://dmlc.github.io/dlpack, v1.0): the structs ptcore
 * exchanges with NumPy, CuPy, PyTorch and others, plus small helpers. */
#ifndef PTC_DLPACK_H
#define PTC_DLPACK_H
#include <stdint.h>
#include <stdlib.h>
#include <Python.h>

typedef struct { int32_t device_type; int32_t device_id; } DLDevice;
typedef struct { uint8_t code; uint8_t bits; uint16_t lanes; } DLDataType;
typedef struct {
    void *data;
    DLDevice device;
    int32_t ndim;
    DLDataType dtype;
    int64_t *shape;
    int64_t *strides;
    uint64_t byte_offset;
} DLTensor;
typedef struct DLManagedTensor {
    DLTensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;
typedef struct { uint32_t major; uint32_t minor; } DLPackVersion;
typedef struct DLManagedTensorVersioned {
    DLPackVersion version;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensorVersioned *self);
    uint64_t flags;
    DLTensor dl_tensor;
} DLManagedTensorVersioned;

#define PTC_DL_FLAG_READ_ONLY ((uint64_t)1 << 0)
#define PTC_DL_FLAG_IS_COPIED ((uint64_t)1 << 1)

/* Consumer side: release a tensor received from another library. */
static void ptc_dlpack_release(void *managed, int versioned) {
    if (managed == NULL) return;
    if (versioned) {
        DLManagedTensorVersioned *m = (DLManagedTensorVersioned *)managed;
        if (m->deleter) m->deleter(m);
    } else {
        DLManagedTensor *m = (DLManagedTensor *)managed;
        if (m->deleter) m->deleter(m);
    }
}

/* Producer side: one malloc holds the managed struct, shape and strides;
 * manager_ctx is a strong reference to the exporting tensor's Storage. */
typedef struct {
    DLManagedTensor legacy;
    DLManagedTensorVersioned versioned;
    int64_t dims[];
} ptc_dl_export;

static void ptc_dl_free_ctx(void *ctx, void *block) {
    if (ctx != NULL) {
        PyGILState_STATE st = PyGILState_Ensure();
        Py_DECREF((PyObject *)ctx);
        PyGILState_Release(st);
    }
    free(block);
}
static void ptc_dl_deleter_legacy(DLManagedTensor *self) {
    ptc_dl_free_ctx(self->manager_ctx, (void *)self);
}
static void ptc_dl_deleter_versioned(DLManagedTensorVersioned *self) {
    ptc_dl_export *e = (ptc_dl_export *)((char *)self - offsetof(ptc_dl_export, versioned));
    ptc_dl_free_ctx(self->manager_ctx, (void *)e);
}

/* Capsule destructors: a capsule never consumed still owns its tensor. */
static void ptc_dl_capsule_legacy(PyObject *cap) {
    if (PyCapsule_IsValid(cap, "used_dltensor")) return;
    DLManagedTensor *m = (DLManagedTensor *)PyCapsule_GetPointer(cap, "dltensor");
    if (m == NULL) { PyErr_WriteUnraisable(cap); return; }
    if (m->deleter) m->deleter(m);
}
static void ptc_dl_capsule_versioned(PyObject *cap) {
    if (PyCapsule_IsValid(cap, "used_dltensor_versioned")) return;
    DLManagedTensorVersioned *m = (DLManagedTensorVersioned *)PyCapsule_GetPointer(cap, "dltensor_versioned");
    if (m == NULL) { PyErr_WriteUnraisable(cap); return; }
    if (m->deleter) m->deleter(m);
}
#endif
