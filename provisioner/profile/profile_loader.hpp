// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/profile.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

// Reading board profiles: the only code in rtprov that knows YAML (yaml-cpp).
namespace rtprov::profile {

// Where profile files are read from: the host's file system, or, for a target's
// /etc/rtprov/profiles, the target root, so that links there resolve inside the image.
class FileSource {
  public:
    virtual ~FileSource() = default;
    // The bytes of regular file 'path'; nullopt when it is not one. Throws rtprov::Error
    // when it exists but cannot be read.
    virtual std::optional<std::string> read(const std::string& path) const = 0;
    // Names in folder 'dir'; empty when it is not one.
    virtual std::vector<std::string> list(const std::string& dir) const = 0;
    // The same string for two paths naming the same file (loop detection).
    virtual std::string identity(const std::string& path) const = 0;
    // How 'path' is shown in messages.
    virtual std::string display(const std::string& path) const = 0;
};

// The host's file system.
std::shared_ptr<const FileSource> host_files();

// A folder profiles are looked up in, and a label for listings ("built-in",
// "target /etc/rtprov/profiles", "--profile-dir").
struct ProfileDir {
    std::string path; // in 'files'
    std::string label;
    std::shared_ptr<const FileSource> files = host_files();
};

// Folders in priority order, highest first: a profile NAME found in an earlier folder
// hides one of the same name in a later folder.
using SearchPath = std::vector<ProfileDir>;

struct ProfileEntry {
    std::string name;
    std::string path; // as shown (FileSource::display)
    std::string label;
    std::string description; // or why the file could not be read
    bool hidden = false;     // shadowed by a profile of the same name earlier in the path
};

// Every *.yaml file in the search path, sorted by name, hidden ones included.
std::vector<ProfileEntry> list_profiles(const SearchPath& search_path);

// A '--set key.path=value' override; value is YAML ('2-3', 'true', '[a, b]').
struct Override {
    std::string text; // as given, for messages
};

// Whether load_profile takes 'name_or_path' as a file of the host (it holds a '/' or ends
// in '.yaml') rather than a name to look up in the search path.
bool is_profile_path(const std::string& name_or_path);

// Loads profile 'name_or_path' (a name looked up in 'search_path', or a path to a
// .yaml file), follows 'extends:', merges base first, applies 'overrides' and checks
// the result (types, unknown keys, CPU lists, priorities: core::validate()).
// Throws rtprov::Error listing every problem as 'file:line:col: message' lines.
core::Profile load_profile(const std::string& name_or_path, const SearchPath& search_path,
                           const std::vector<Override>& overrides = {});

// Parses a resolved profile from text, as written by to_yaml(); 'label' names it in
// errors. Throws rtprov::Error like load_profile().
core::Profile parse_profile(const std::string& text, const std::string& label);

// The fully resolved profile as YAML: every key with its value, defaults included,
// no 'extends:'. parse_profile(to_yaml(p)) gives p back (origins aside).
std::string to_yaml(const core::Profile& profile);

} // namespace rtprov::profile
