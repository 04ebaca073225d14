#pragma once

#include <string>
#include <string_view>
#include <vector>

// Text helpers every folder shares.
namespace rtprov::core {

// The words of a text, split at whitespace (the C locale's isspace).
std::vector<std::string> words(std::string_view text);

// True when 'word' is one of the words of 'text'.
bool has_word(std::string_view text, std::string_view word);

// The items with 'separator' between them: join({"a", "b"}, ", ") is "a, b".
std::string join(const std::vector<std::string>& items, std::string_view separator);

} // namespace rtprov::core
