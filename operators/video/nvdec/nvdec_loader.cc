#include "operators/video/nvdec/nvdec_loader.h"

#include <dlfcn.h>

#include <cstdarg>
#include <cstdio>
#include <mutex>

namespace conveyor::ops::video {
namespace nvdec_detail {

// The loader calls this right after a failed dlopen / dlsym, so dlerror() still holds the reason.
void LoaderLog(void* log, const char* format, ...) {
  char line[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(line, sizeof(line), format, args);
  va_end(args);
  auto* text = static_cast<std::string*>(log);
  if (text == nullptr) return;
  std::string s(line);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  if (const char* why = dlerror()) s += std::string(" (") + why + ")";
  if (!text->empty()) *text += "; ";
  *text += s;
}

}  // namespace nvdec_detail

namespace {

struct Loaded {
  NvdecApi api;
  bool ok = false;
  std::string why;
};

Loaded LoadOnce() {
  Loaded l;
  if (cuda_load_functions(&l.api.cu, &l.why) != 0) {
    if (l.why.empty()) l.why = "libcuda.so.1: cannot load";
    cuda_free_functions(&l.api.cu);
    return l;
  }
  if (cuvid_load_functions(&l.api.cuvid, &l.why) != 0) {
    if (l.why.empty()) l.why = "libnvcuvid.so.1: cannot load";
    cuvid_free_functions(&l.api.cuvid);
    cuda_free_functions(&l.api.cu);
    return l;
  }
  const CUresult r = l.api.cu->cuInit(0);
  if (r != CUDA_SUCCESS) {
    l.why = CuResultText(l.api, r, "cuInit");
    return l;
  }
  int devices = 0;
  if (l.api.cu->cuDeviceGetCount(&devices) != CUDA_SUCCESS || devices == 0) {
    l.why = "no CUDA device";
    return l;
  }
  if (l.api.cuvid->cuvidGetDecoderCaps == nullptr) {
    l.why = "libnvcuvid.so.1 has no cuvidGetDecoderCaps (driver too old)";
    return l;
  }
  l.ok = true;
  return l;
}

}  // namespace

const NvdecApi* SharedNvdec(std::string* why) {
  static std::once_flag once;
  static Loaded* loaded = nullptr;  // never freed: the tables live as long as the process
  std::call_once(once, [] { loaded = new Loaded(LoadOnce()); });
  if (loaded->ok) return &loaded->api;
  if (why != nullptr) *why = loaded->why;
  return nullptr;
}

std::string CuResultText(const NvdecApi& api, CUresult result, const char* call) {
  const char* name = nullptr;
  if (api.cu != nullptr && api.cu->cuGetErrorName != nullptr) api.cu->cuGetErrorName(result, &name);
  return std::string(call) + " failed: " + (name ? name : "CUDA error") + " (" + std::to_string(static_cast<int>(result)) + ")";
}

}  // namespace conveyor::ops::video
