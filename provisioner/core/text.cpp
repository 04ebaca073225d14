#include "provisioner/core/text.hpp"

#include <algorithm>
#include <cctype>

namespace rtprov::core {

std::vector<std::string> words(std::string_view text) {
    std::vector<std::string> out;
    std::size_t i = 0;
    while (i < text.size()) {
        while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i])))
            ++i;
        std::size_t start = i;
        while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i])))
            ++i;
        if (i > start)
            out.emplace_back(text.substr(start, i - start));
    }
    return out;
}

bool has_word(std::string_view text, std::string_view word) {
    const std::vector<std::string> all = words(text);
    return std::find(all.begin(), all.end(), word) != all.end();
}

std::string join(const std::vector<std::string>& items, std::string_view separator) {
    std::string out;
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (i > 0)
            out += separator;
        out += items[i];
    }
    return out;
}

std::string quoted_list(const std::vector<std::string>& items) {
    std::string out;
    for (const std::string& item : items)
        out += (out.empty() ? "'" : ", '") + item + "'";
    return out;
}

std::string shell_command(const std::vector<std::string>& argv) {
    // The words a shell takes as its own where a command name is due (POSIX 2.4).
    static const std::vector<std::string_view> k_reserved = {
        "case", "do", "done", "elif", "else",  "esac", "fi",
        "for",  "if", "in",   "then", "until", "while"};
    std::string out;
    for (const std::string& word : argv) {
        const bool first = out.empty();
        if (!first)
            out += ' ';
        bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) ||
                   std::string_view("_./=:,+@%-").find(c) != std::string_view::npos;
        });
        // The command name: 'A=b' would be an assignment, 'if' a reserved word.
        if (first && (word.find('=') != std::string::npos ||
                      std::find(k_reserved.begin(), k_reserved.end(), word) != k_reserved.end()))
            plain = false;
        if (plain) {
            out += word;
            continue;
        }
        out += '\'';
        for (char c : word)
            out += c == '\'' ? std::string("'\\''") : std::string(1, c);
        out += '\'';
    }
    return out;
}

} // namespace rtprov::core
