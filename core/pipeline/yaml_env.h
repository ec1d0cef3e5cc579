// `${VAR}` / `${VAR:-default}` in pipeline YAML scalars: the substitution the loader makes before a
// value is typed, and the note that names the variables behind a value that then does not parse.
#pragma once

#include <string>

namespace conveyor {

// `${VAR}` / `${VAR:-default}` substitution on one scalar ("$${" is a literal "${"); throws
// ConfigError (prefixed by `where`) for an unset variable without default or an unterminated `${`.
std::string SubstituteEnv(const std::string& text, const std::string& where);

// For a value that does not parse after substitution: which variables made it, and their values
// (" (from ${RANK}: RANK is \"abc\")"); "" for a value written without `${`.
std::string EnvNote(const std::string& raw);

}  // namespace conveyor
