# rtslab_patches.m4 -- the machinery behind configure.ac's patch lines.
#
# configure.ac calls RTSLAB_PATCHES_BEGIN, then RTSLAB_PATCH once per patch, then
# RTSLAB_PATCHES_END. (A patch's RTS options are rows of its own file, which a build without
# the patch does not know: Note [The option table] in runtime/rts/options.c.) Each patch gets
# an --enable-NAME switch (--enable-NAME[=ARG] when ARG is
# given: any value other than yes/no also turns the patch on, and configure.ac validates it),
# whose default is the value of --enable-all-patches. MACRO is always defined in
# rtslab_config.h, as 1 when the patch is on and 0 when it is off, so the code tests it with
# #if under -Wundef. RTSLAB_PATCHES names the patches that are on and RTSLAB_PATCHES_KNOWN
# every patch this tree has, both in configure.ac's order, separated by spaces ("none" when
# there are none), so that nothing else in the tree lists the patches. RTSLAB_PATCH_REGS lists
# the patches that are on as RTSLAB_PATCH_REG(name) (name with _ for -), from which
# runtime/rts/options.c makes the list of the patches' registrations (Note [Patch
# registration] in runtime/rts/patch.h).

# RTSLAB_PATCHES_BEGIN
# --------------------
# The --enable-all-patches switch, before any patch's.
AC_DEFUN([RTSLAB_PATCHES_BEGIN],
[AC_ARG_ENABLE([all-patches],
  [AS_HELP_STRING([--enable-all-patches],
    [turn on every patch below (each can still be turned off with --disable-NAME)])],
  [AS_CASE([$enable_all_patches], [yes|no], [],
     [AC_MSG_ERROR([--enable-all-patches takes no value])])],
  [enable_all_patches=no])
rtslab_patches=
rtslab_known=
rtslab_patch_regs=
])

# RTSLAB_PATCH(NAME, MACRO, HELP, [ARG])
# ---------------------------------------
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
AS_VAR_APPEND([rtslab_known], [" $1"])
AS_IF([test $rtslab_patch_on = 1], [AS_VAR_APPEND([rtslab_patches], [" $1"])
  AS_VAR_APPEND([rtslab_patch_regs], [" RTSLAB_PATCH_REG(]m4_translit([$1], [-], [_])[)"])])
])

# RTSLAB_PATCHES_END
# ------------------
AC_DEFUN([RTSLAB_PATCHES_END],
[rtslab_patches=${rtslab_patches# }
AS_IF([test -z "$rtslab_patches"], [rtslab_patches=none])
rtslab_known=${rtslab_known# }
AS_IF([test -z "$rtslab_known"], [rtslab_known=none])
AC_MSG_CHECKING([which patches are on])
AC_MSG_RESULT([$rtslab_patches])
AC_DEFINE_UNQUOTED([RTSLAB_PATCHES], ["$rtslab_patches"],
  [The patches compiled in, separated by spaces, or "none".])
AC_DEFINE_UNQUOTED([RTSLAB_PATCHES_KNOWN], ["$rtslab_known"],
  [Every patch this tree has (on or off), separated by spaces, or "none".])
rtslab_patch_regs=${rtslab_patch_regs# }
AC_DEFINE_UNQUOTED([RTSLAB_PATCH_REGS], [$rtslab_patch_regs],
  [The patches that are on, as RTSLAB_PATCH_REG(name) each, name with _ for -
   (Note [Patch registration] in runtime/rts/patch.h).])
])
