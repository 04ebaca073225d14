// SPDX-License-Identifier: Apache-2.0
#pragma once

// Catch2 2.x (Debian 12) has one header; 3.x (Debian 13) splits it. The tests include
// this file and build with either.
#if __has_include(<catch2/catch_test_macros.hpp>)
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#else
#include <catch2/catch.hpp>
#endif
