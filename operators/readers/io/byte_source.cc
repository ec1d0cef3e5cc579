#include "operators/readers/io/byte_source.h"

#include <strings.h>

#include "core/error.h"
#include "operators/readers/io/local_source.h"

namespace conveyor::ops {

bool IsUrl(const std::string& path_or_url) {
  return path_or_url.size() > 7 && (strncasecmp(path_or_url.c_str(), "http://", 7) == 0 ||
                                    strncasecmp(path_or_url.c_str(), "https://", 8) == 0);
}

std::unique_ptr<ByteSource> OpenByteSource(const std::string& path_or_url, const FetchOptions& options) {
  (void)options;
  // The fetch layer (http_source.h) takes URLs; until it lands they are refused by name.
  if (IsUrl(path_or_url)) throw InvalidArgument("\"" + path_or_url + "\": URLs are not supported yet");
  return OpenLocalSource(path_or_url);
}

}  // namespace conveyor::ops
