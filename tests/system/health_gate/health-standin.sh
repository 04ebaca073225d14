#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Test fixture, only with RTPROV_HEALTH_STANDIN=1 (debugging health_gate_test.sh's harness):
# the contract of 'rtprov health --boot' with a trivial verdict. Healthy (exit 0) when the
# kernel command line has isolcpus=, which the profile puts there; otherwise not healthy
# (exit 3), and on a boot systemd-boot counts (its LoaderBootCountPath EFI variable is
# set) it asks systemd for a reboot, so that the boot loader tries the entry again or
# falls back.
cmdline=$(cat /proc/cmdline)
case " $cmdline " in
*" isolcpus="*)
    echo "health stand-in: healthy (isolcpus= on the kernel command line)"
    exit 0
    ;;
esac
echo "health stand-in: not healthy: no isolcpus= on the kernel command line"
if [ -e /sys/firmware/efi/efivars/LoaderBootCountPath-4a67b082-0a4c-41cf-b6c7-440b29bb8c4f ]; then
    echo "health stand-in: systemd-boot counts this boot: rebooting"
    systemctl reboot
fi
exit 3
