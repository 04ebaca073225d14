#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Test fixture, only in the image health_gate_test.sh builds: RAUC's custom boot loader
# backend (system.conf: bootloader=custom), for one slot, A, that is primary and good.
# Every call is written to /var/lib/health-test/rauc-backend.log with the boot's number,
# so that the host sees which boot's 'rauc status mark-good' reached the boot loader.
boot=$(cat /var/lib/health-test/boots 2>/dev/null)
echo "boot ${boot:-?}: $*" >>/var/lib/health-test/rauc-backend.log
case $1 in
get-primary) echo A ;;
get-state) echo good ;;
set-state | set-primary) ;;
*) exit 1 ;;
esac
