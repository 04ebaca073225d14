// SPDX-License-Identifier: Apache-2.0
// Catch2 2.x needs one file to provide main(); 3.x links Catch2::Catch2WithMain instead.
#if !__has_include(<catch2/catch_test_macros.hpp>)
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
#endif
