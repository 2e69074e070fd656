// What the CLI and the mount both take from a user: the vers= value and a
// password typed at a terminal.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "base/secret.h"

namespace smbkit::client {

// Dialects for a mount.cifs style vers= value: 2.0, 2.1, 3 (3.0 or later),
// 3.0, 3.02, 3.1.1, or default (all). The error's context names the value.
Result<std::vector<uint16_t>> dialects_for_vers(const std::string& vers);

// Takes SMBKIT_PASSWORD out of the environment: returns its value, zeros
// the value's bytes where they are (for the initial environment that is
// the block /proc/PID/environ shows) and unsets it, so that children do
// not inherit it. nullopt when unset.
std::optional<SecretString> take_env_password();

// Prompts on stderr and reads a line from stdin with echo off.
SecretString prompt_password(const std::string& who);

}  // namespace smbkit::client
