#include "provisioner/profile/yaml_tree.hpp"

#include <algorithm>

namespace rtprov::profile {

const Tree* Tree::find(const std::string& key) const {
    for (const TreeEntry& entry : entries)
        if (entry.key == key)
            return &entry.value;
    return nullptr;
}

Tree* Tree::find(const std::string& key) {
    return const_cast<Tree*>(static_cast<const Tree*>(this)->find(key));
}

void merge_into(Tree& base, const Tree& overlay) {
    if (base.kind != Tree::Kind::map || overlay.kind != Tree::Kind::map) {
        base = overlay;
        return;
    }
    for (const TreeEntry& entry : overlay.entries) {
        auto it = std::find_if(base.entries.begin(), base.entries.end(),
                               [&](const TreeEntry& e) { return e.key == entry.key; });
        if (entry.value.kind == Tree::Kind::null) {
            if (it != base.entries.end())
                base.entries.erase(it);
        } else if (it == base.entries.end()) {
            base.entries.push_back(entry);
        } else {
            it->key_origin = entry.key_origin;
            merge_into(it->value, entry.value);
        }
    }
}

} // namespace rtprov::profile
