"""PyCapsule access through ctypes.pythonapi, for DLPack capsules.

Prototypes are instantiated privately (not by setting argtypes on ctypes.pythonapi's shared
function objects), so other libraries that configure pythonapi differently are not disturbed.
"""
import ctypes

from . import _lib

VERSIONED = b"dltensor_versioned"
LEGACY = b"dltensor"
USED_VERSIONED = b"used_dltensor_versioned"
USED_LEGACY = b"used_dltensor"

# PyCapsule keeps a pointer to its name, so every name we set must outlive the capsule: these
# buffers live as long as the interpreter.
_NAMES = {name: ctypes.create_string_buffer(name) for name in (VERSIONED, LEGACY, USED_VERSIONED, USED_LEGACY)}


def _api(name, restype, *argtypes):
    return ctypes.PYFUNCTYPE(restype, *argtypes)((name, ctypes.pythonapi))


_get_name = _api("PyCapsule_GetName", ctypes.c_char_p, ctypes.py_object)
_get_pointer = _api("PyCapsule_GetPointer", ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)
_set_name = _api("PyCapsule_SetName", ctypes.c_int, ctypes.py_object, ctypes.c_void_p)
_new = _api("PyCapsule_New", ctypes.py_object, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
# For the destructor, which runs while the capsule is being freed: raw addresses only, so no
# reference count is touched.
_raw_is_valid = _api("PyCapsule_IsValid", ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)
_raw_get_pointer = _api("PyCapsule_GetPointer", ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)
_inc_ref = _api("Py_IncRef", None, ctypes.py_object)
_dec_ref = _api("Py_DecRef", None, ctypes.c_void_p)


def is_capsule(obj):
    return type(obj).__name__ == "PyCapsule"


def name_of(capsule):
    return _get_name(capsule)


def take(capsule):
    """Takes ownership of a DLPack capsule's managed tensor: returns (pointer, versioned) and renames
    the capsule "used_..." so that neither its destructor nor anyone else frees the tensor again."""
    name = _get_name(capsule)
    if name == VERSIONED:
        used, versioned = USED_VERSIONED, True
    elif name == LEGACY:
        used, versioned = USED_LEGACY, False
    elif name in (USED_VERSIONED, USED_LEGACY):
        raise _lib.InteropError("DLPack capsule: expected an unconsumed capsule, got %r: it was already "
                                "consumed (a capsule can be imported once)" % name.decode())
    else:
        raise _lib.InteropError("DLPack capsule: expected a capsule named 'dltensor_versioned' or "
                                "'dltensor', got %r" % (name.decode() if name else None))
    pointer = _get_pointer(capsule, name)
    if not pointer:
        raise _lib.InteropError("DLPack capsule %r: expected a DLManagedTensor pointer, got NULL" % name.decode())
    if _set_name(capsule, ctypes.addressof(_NAMES[used])) != 0:
        raise _lib.InteropError("DLPack capsule %r: could not mark it used" % name.decode())
    return pointer, versioned


@ctypes.CFUNCTYPE(None, ctypes.c_void_p)
def _destructor(capsule_address):
    # Runs when a capsule we made dies; unless a consumer renamed it, the tensor is still ours.
    try:
        if _raw_is_valid(capsule_address, VERSIONED):
            _lib.lib.conveyor_dlpack_versioned_delete(_raw_get_pointer(capsule_address, VERSIONED))
        elif _raw_is_valid(capsule_address, LEGACY):
            _lib.lib.conveyor_dlpack_delete(_raw_get_pointer(capsule_address, LEGACY))
    except BaseException:  # nothing may escape a destructor
        pass


_DESTRUCTOR_ADDRESS = ctypes.cast(_destructor, ctypes.c_void_p).value


def make(pointer, versioned):
    """Wraps a managed tensor we exported in a capsule that frees it unless a consumer takes it."""
    name = VERSIONED if versioned else LEGACY
    return _new(pointer, ctypes.addressof(_NAMES[name]), _DESTRUCTOR_ADDRESS)


@_lib.RELEASE_FN
def release_object(address):
    """conveyor_release_fn for CUDA Array Interface imports: drops the reference that keeps the
    producer alive (ctypes takes the GIL for us, whichever thread calls)."""
    _dec_ref(address)


def keep_alive(obj):
    """Adds the reference that release_object drops; returns the context to pass with it."""
    _inc_ref(obj)
    return id(obj)
