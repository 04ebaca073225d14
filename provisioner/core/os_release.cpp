// SPDX-License-Identifier: Apache-2.0
#include "provisioner/core/os_release.hpp"

#include <sstream>

namespace rtprov::core {

namespace {

std::string unquote(const std::string& value) {
    if (value.size() < 2 || (value.front() != '"' && value.front() != '\'') ||
        value.back() != value.front())
        return value;
    std::string out;
    for (std::size_t i = 1; i + 1 < value.size(); ++i) {
        if (value[i] == '\\' && value.front() == '"' && i + 2 < value.size())
            ++i;
        out += value[i];
    }
    return out;
}

} // namespace

OsRelease parse_os_release(const std::string& text) {
    OsRelease os;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        auto equals = line.find('=');
        if (line.empty() || line[0] == '#' || equals == std::string::npos)
            continue;
        std::string key = line.substr(0, equals);
        std::string value = unquote(line.substr(equals + 1));
        if (key == "ID")
            os.id = value;
        else if (key == "VERSION_ID")
            os.version_id = value;
        else if (key == "PRETTY_NAME")
            os.pretty_name = value;
        else if (key == "ID_LIKE") {
            std::istringstream words(value);
            std::string word;
            while (words >> word)
                os.id_like.push_back(word);
        }
    }
    return os;
}

} // namespace rtprov::core
