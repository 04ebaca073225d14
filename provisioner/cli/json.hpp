// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/json.hpp"
#include "provisioner/core/text.hpp"

namespace rtprov::cli {

// A JSON string literal for 'text' (core::json_string: the flows keep JSON too).
using core::json_string;

// The first two members of every --json object (core::json_schema).
using core::json_schema;

} // namespace rtprov::cli
