# rtslab_patches.m4 -- the machinery behind configure.ac's patch table.
#
# RTSLAB_PATCH_TABLE is a list of entries, one per patch, each [[NAME], [MACRO], [HELP]] or
# [[NAME], [MACRO], [HELP], [ARG]]. For each entry configure gets an --enable-NAME switch
# (--enable-NAME[=ARG] when ARG is given: any value other than yes/no also turns the patch
# on, and configure.ac validates it), whose default is the value of --enable-all-patches.
# MACRO is always defined in rtslab_config.h, as 1 when the patch is on and 0 when it is off,
# so the code tests it with #if under -Wundef. The names of the patches that are on collect in
# the shell variable rtslab_patches, in table order.

# RTSLAB_PATCH(NAME, MACRO, HELP, [ARG])
# --------------------------------------
AC_DEFUN([RTSLAB_PATCH],
[AC_ARG_ENABLE([$1],
  [AS_HELP_STRING([--enable-$1]m4_ifnblank([$4], [[@<:@=$4@:>@]]), [$3])],
  [],
  [AS_TR_SH([enable_$1])=$enable_all_patches])
AS_CASE([$AS_TR_SH([enable_$1])],
  [no], [rtslab_patch_on=0],
  [yes], [rtslab_patch_on=1],
  [m4_ifblank([$4],
     [AC_MSG_ERROR([--enable-$1 takes no value (got '$AS_TR_SH([enable_$1])')])],
     [rtslab_patch_on=1])])
AC_DEFINE_UNQUOTED([$2], [$rtslab_patch_on], [Patch $1 (--enable-$1): $3])
AS_IF([test $rtslab_patch_on = 1], [AS_VAR_APPEND([rtslab_patches], [" $1"])])
])

# RTSLAB_PATCHES_FROM_TABLE
# -------------------------
# Expands RTSLAB_PATCH once per entry of RTSLAB_PATCH_TABLE, after --enable-all-patches.
AC_DEFUN([RTSLAB_PATCHES_FROM_TABLE],
[AC_ARG_ENABLE([all-patches],
  [AS_HELP_STRING([--enable-all-patches],
    [turn on every patch below (each can still be turned off with --disable-NAME)])],
  [AS_CASE([$enable_all_patches], [yes|no], [],
     [AC_MSG_ERROR([--enable-all-patches takes no value])])],
  [enable_all_patches=no])
rtslab_patches=
m4_map([RTSLAB_PATCH], m4_defn([RTSLAB_PATCH_TABLE]))dnl
rtslab_patches=${rtslab_patches# }
AS_IF([test -z "$rtslab_patches"], [rtslab_patches=none])
])
