#include "operators/readers/io/byte_source.h"

#include <strings.h>

#include "operators/readers/io/http_source.h"
#include "operators/readers/io/local_source.h"

namespace conveyor::ops {

bool IsUrl(const std::string& path_or_url) {
  return path_or_url.size() > 7 && (strncasecmp(path_or_url.c_str(), "http://", 7) == 0 ||
                                    strncasecmp(path_or_url.c_str(), "https://", 8) == 0);
}

std::unique_ptr<ByteSource> OpenByteSource(const std::string& path_or_url, const FetchOptions& options) {
  if (IsUrl(path_or_url)) return HttpSource::Open(path_or_url, options);
  return OpenLocalSource(path_or_url);
}

}  // namespace conveyor::ops
