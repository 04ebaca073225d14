#!/bin/bash -e
# SPDX-License-Identifier: Apache-2.0
# On the build host. pi-gen runs a step's NN-packages before its NN-run.sh and all of
# step 00 before step 01 (build.sh run_sub_stage), so this prepares step 01:
#  - a profile given as a file, into the image's /etc/rtprov/profiles;
#  - the rtprov package for the image's architecture, for 01-run-chroot.sh;
#  - 01-packages: what the profile needs installed ('rtprov plan --packages': the
#    PREEMPT_RT kernel when RTPROV_RT_KERNEL=1), written anew on every build.
# shellcheck source-path=SCRIPTDIR source=rtprov-stage.sh
. ./rtprov-stage.sh

rtprov_find_deb
if [ -n "${rtprov_profile_file}" ]; then
	install -D -m 644 "${rtprov_profile_file}" "${ROOTFS_DIR}/etc/rtprov/profiles/${rtprov_profile}.yaml"
	echo "stage-rtprov: profile '${rtprov_profile}' installed as /etc/rtprov/profiles/${rtprov_profile}.yaml"
fi
# Not /tmp: on_chroot mounts a tmpfs there (pi-gen's scripts/common).
install -D -m 644 "${rtprov_deb}" "${ROOTFS_DIR}/var/cache/rtprov-stage/rtprov.deb"
echo "stage-rtprov: $(basename "${rtprov_deb}") staged for the image"

packages=$("${RTPROV}" plan --root "${ROOTFS_DIR}" "${rtprov_args[@]}" --packages)
if [ -n "${packages}" ]; then
	{
		echo "# written by 00-run.sh from 'rtprov plan --packages'; rewritten on every build"
		echo "${packages}"
	} >01-packages
	echo "stage-rtprov: 01-packages: $(echo "${packages}" | tr '\n' ' ')"
else
	rm -f 01-packages
fi
