#!/bin/sh
# on_fixture.sh SRC FIXTURE MASK ARGS...: runs the build's ./rtslab ARGS on the machine that
# testsuite/topology/fixtures/FIXTURE describes (RTSLAB_SYSFS_ROOT), through the CPU mask MASK
# (RTSLAB_CPU_MASK; "-": none, every online CPU of the fixture).
src=$1 fixture=$2 mask=$3
shift 3
RTSLAB_SYSFS_ROOT="$src/testsuite/topology/fixtures/$fixture"
export RTSLAB_SYSFS_ROOT
if [ "$mask" = - ]; then
    unset RTSLAB_CPU_MASK
else
    RTSLAB_CPU_MASK=$mask
    export RTSLAB_CPU_MASK
fi
exec ./rtslab "$@"
