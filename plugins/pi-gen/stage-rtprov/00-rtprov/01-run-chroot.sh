#!/bin/bash -e
# SPDX-License-Identifier: Apache-2.0
# Inside the image (pi-gen's on_chroot; under qemu-user on an x86 build host): rtprov
# itself, for first boot, 'rtprov audit', 'rtprov selftest' and 'rtprov rollback' on the Pi.
# apt-get brings its libraries from the image's own archive.
apt-get install -y /var/cache/rtprov-stage/rtprov.deb
rm -rf /var/cache/rtprov-stage
rtprov --version
