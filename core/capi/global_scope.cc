// Puts libconveyor_c.so's exported symbols (the C API and conveyor::…) into the process's global
// symbol scope as soon as it is loaded, so that plugins can be loaded by pipelines created here.
//
// Why: a plugin leaves conveyor:: symbols undefined (docs/plugins.md) and the core dlopen()s it;
// the dynamic linker resolves those symbols only from the global scope, but Python's ctypes (and
// most hosts that load libraries at run time) open this library RTLD_LOCAL. glibc ignores the
// DF_1_GLOBAL flag (ld -z global) for dlopen(), so the library re-opens itself with
// RTLD_NOLOAD | RTLD_GLOBAL, which promotes the already loaded object and loads nothing.
// Linked into libconveyor_c.so only; a program linked against it has it in the global scope already.
#include <dlfcn.h>

namespace {

__attribute__((constructor)) void PromoteToGlobalScope() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&PromoteToGlobalScope), &info) == 0 || info.dli_fname == nullptr) {
    return;  // nothing to promote; plugin loading then reports the unresolved symbol by name
  }
  if (void* self = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL)) {
    dlclose(self);  // drops only the reference that this dlopen() added; the promotion stays
  }
}

}  // namespace
