# SPDX-License-Identifier: Apache-2.0
# bash completion for rtprov(1)                                    -*- shell-script -*-
# shellcheck shell=bash
#
# Installed as /usr/share/bash-completion/completions/rtprov, where Debian's
# bash-completion loads it the first time 'rtprov' is completed; it uses that package's
# helpers (_init_completion, _filedir). The commands and options are the ones
# 'rtprov --help' and 'rtprov COMMAND --help' list: tests/system/package_test.sh compares
# them with what the packaged program says. Profile names come from 'rtprov profiles'.

# _rtprov_options COMMAND: the options of 'rtprov COMMAND' ('': of rtprov itself).
_rtprov_options()
{
    local target='--root --image --live' profiles='--profile-dir --set'
    case $1 in
    '') echo --help --version ;;
    profiles | 'profiles show') echo "--help $target $profiles --json" ;;
    plan)
        echo "--help $target --profile $profiles --json --packages --regenerate-boot" \
            "--force-priority --trial --install-packages --firstboot --firstboot-set"
        ;;
    apply)
        echo "--help $target --profile $profiles --runtime --regenerate-boot" \
            "--force-priority --trial --install-packages --firstboot --firstboot-set"
        ;;
    status) echo "--help $target --json --diff --prometheus" ;;
    rollback) echo "--help $target --force --regenerate-boot" ;;
    selftest)
        echo --help --cpus --duration --summary --interval --priority --idle --load \
            --stop-above --trace --pi-probe --json --prometheus --html --compare --history \
            --audio --tone --period --buffer --stop-player --sysroot
        ;;
    report) echo --help --history --from --html ;;
    audit) echo --help --json --prometheus --sysroot ;;
    'trial status') echo --help --json --prometheus --root --sysroot ;;
    'trial check') echo --help --prometheus --root --sysroot ;;
    'trial commit' | 'trial abort') echo --help --root --sysroot ;;
    health) echo --help --json --prometheus --timeout --boot --sysroot ;;
    irq-tune)
        echo --help --restore --sound-priority --sound-cpus --sound-name --other-priority \
            --timer-priority --workqueue-cpus --state
        ;;
    *) echo --help ;;
    esac
}

# _rtprov_subcommands COMMAND: the subcommands of 'rtprov COMMAND' ('': rtprov's commands).
_rtprov_subcommands()
{
    case $1 in
    '')
        echo profiles plan apply status rollback sched-features hold-cpu-dma-latency \
            cpuset-partition selftest report audit firstboot trial health irq-tune
        ;;
    profiles) echo show ;;
    trial) echo status check commit abort ;;
    esac
}

# _rtprov_takes_value COMMAND OPTION: whether OPTION of 'rtprov COMMAND' takes a value.
_rtprov_takes_value()
{
    case $2 in
    --root | --image | --profile | --profile-dir | --set | --regenerate-boot | --cpus | \
        --duration | --summary | --interval | --priority | --idle | --stop-above | \
        --pi-probe | --prometheus | --html | --history | --sysroot | --from | \
        --sound-priority | --sound-cpus | --sound-name | --other-priority | \
        --timer-priority | --workqueue-cpus | --state | --firstboot-set | --period | --buffer | \
        --timeout)
        return 0
        ;;
    --json) [[ $1 == selftest ]] ;; # a FILE there, a flag elsewhere
    *) return 1 ;;
    esac
}

# _rtprov_profile_names PROGRAM PREFIX ARGS...: the profiles 'PROGRAM profiles ARGS...'
# lists that start with PREFIX, added to COMPREPLY. The names are file names from the
# target's /etc/rtprov/profiles too, so they are compared as text and never given to
# compgen -W, which would expand them.
_rtprov_profile_names()
{
    local program=$1 prefix=$2 name _
    shift 2
    while read -r name _; do
        [[ $name == "$prefix"* ]] && COMPREPLY+=("$name")
    done < <("$program" profiles "$@" 2>/dev/null | tail -n +2 | sort -u)
}

_rtprov()
{
    local cur prev words cword split
    _init_completion -s || return

    # The command path ('trial status'), how many other words it has been given (the
    # profile of 'profiles show', the slice and mode of 'cpuset-partition'), and the
    # options that tell rtprov where profiles are (for profile names).
    local command='' i word
    local -i given=0
    local -a where=()
    for ((i = 1; i < cword; i++)); do
        word=${words[i]}
        if [[ $word == --root=* || $word == --profile-dir=* ]]; then
            where+=("$word")
        elif [[ $word == -* ]]; then
            if _rtprov_takes_value "$command" "$word"; then
                [[ $word == --root || $word == --profile-dir ]] && where+=("$word" "${words[i + 1]}")
                ((i++))
            fi
        elif [[ " $(_rtprov_subcommands "$command") " == *" $word "* ]] && ((given == 0)); then
            command=${command:+$command }$word
        else
            given+=1
        fi
    done

    case $prev in
    --root | --profile-dir | --history | --sysroot)
        _filedir -d
        return
        ;;
    --image | --prometheus | --html | --from | --state)
        _filedir
        return
        ;;
    --json)
        if [[ $command == selftest ]]; then
            _filedir
            return
        fi
        ;;
    --profile)
        _rtprov_profile_names "$1" "$cur" "${where[@]}"
        _filedir yaml
        return
        ;;
    --regenerate-boot)
        if [[ $command == rollback ]]; then
            mapfile -t COMPREPLY < <(compgen -W 'now never' -- "$cur")
        else
            mapfile -t COMPREPLY < <(compgen -W 'now first-boot never' -- "$cur")
        fi
        return
        ;;
    --idle)
        mapfile -t COMPREPLY < <(compgen -W 'default held both' -- "$cur")
        return
        ;;
    --audio) # a value only as --audio=DEVICE
        if $split; then
            mapfile -t COMPREPLY < <(compgen -W 'loopback' -- "$cur")
            return
        fi
        ;;
    esac
    _rtprov_takes_value "$command" "$prev" && return # a number, a CPU list, KEY=VALUE
    $split && return

    if [[ $cur == -* ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$(_rtprov_options "$command")" -- "$cur")
        return
    fi
    case $command:$given in
    'profiles show:0')
        _rtprov_profile_names "$1" "$cur" "${where[@]}"
        _filedir yaml
        ;;
    cpuset-partition:0) ;; # a slice name, such as rtprov.slice
    cpuset-partition:1) mapfile -t COMPREPLY < <(compgen -W 'isolated root' -- "$cur") ;;
    *:0) mapfile -t COMPREPLY < <(compgen -W "$(_rtprov_subcommands "$command")" -- "$cur") ;;
    esac
} &&
    complete -F _rtprov rtprov

# ex: filetype=sh
