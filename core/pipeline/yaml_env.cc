#include "core/pipeline/yaml_env.h"

#include <cstdlib>

#include "core/error.h"

namespace conveyor {

std::string SubstituteEnv(const std::string& text, const std::string& where) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 3, "$${") == 0) {  // "$${" escapes a literal "${"
      out += "${";
      i += 2;
      continue;
    }
    if (text.compare(i, 2, "${") != 0) {
      out += text[i];
      continue;
    }
    const size_t close = text.find('}', i);
    if (close == std::string::npos) throw ConfigError(where + ": unterminated \"${\" in \"" + text + "\"");
    const std::string body = text.substr(i + 2, close - i - 2);
    const size_t dflt = body.find(":-");
    const std::string var = body.substr(0, dflt);
    const char* value = std::getenv(var.c_str());
    if (value != nullptr && *value != '\0') {
      out += value;
    } else if (dflt != std::string::npos) {
      out += body.substr(dflt + 2);
    } else {
      throw ConfigError(where + ": environment variable " + var + " is not set and \"${" + var +
                        "}\" has no default (write ${" + var + ":-value})");
    }
    i = close;
  }
  return out;
}

std::string EnvNote(const std::string& raw) {
  std::string note;
  for (size_t at = raw.find("${"); at != std::string::npos; at = raw.find("${", at + 2)) {
    if (at > 0 && raw[at - 1] == '$') continue;  // "$${": a literal
    const size_t close = raw.find('}', at);
    if (close == std::string::npos) break;
    const std::string body = raw.substr(at + 2, close - at - 2);
    const size_t dflt = body.find(":-");
    const std::string var = body.substr(0, dflt);
    const char* value = std::getenv(var.c_str());
    // No ":-" (e.g. "${}" or "${X}" left in the text): no default to name.
    const std::string unset = dflt == std::string::npos ? " is unset" : " is unset, default \"" + body.substr(dflt + 2) + "\"";
    note += std::string(note.empty() ? "" : ", ") + (var.empty() ? "${}" : var) +
            (value != nullptr && *value != '\0' ? " is \"" + std::string(value) + "\"" : unset);
  }
  return note.empty() ? "" : " (from \"" + raw + "\": " + note + ")";
}

}  // namespace conveyor
