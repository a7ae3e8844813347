# gk_path_map_flags(<out var> <compile cwd> <new prefix> <dir>...): the -ffile-prefix-map flags
# that rewrite every spelling of each <dir> a compiler may see to <new prefix>: as given, its real
# path (a folder may be a symlink), and both relative to the compile cwd (ccache with base_dir
# hands the compiler relative paths; Ninja compiles from the build folder). GCC and clang apply
# the last matching map, so a caller lists outer folders before the folders inside them.
# Included by cmake/Flags.cmake and by the BoringSSL project cmake/BoringSSL.cmake writes.
function(gk_path_map_flags out cwd new)
  get_filename_component(_cwd_real "${cwd}" REALPATH)
  set(_flags "")
  foreach(_dir IN LISTS ARGN)
    string(REGEX REPLACE "(.)/+$" "\\1" _dir "${_dir}")
    get_filename_component(_real "${_dir}" REALPATH)
    file(RELATIVE_PATH _rel "${cwd}" "${_dir}")
    file(RELATIVE_PATH _rel_real "${_cwd_real}" "${_real}")
    foreach(_from IN ITEMS "${_dir}" "${_real}" "${_rel}" "${_rel_real}")
      string(REGEX REPLACE "(.)/+$" "\\1" _from "${_from}")
      # An empty relative path is the cwd itself: a map of "/" would rewrite every absolute path.
      if(NOT _from STREQUAL "")
        list(APPEND _flags "-ffile-prefix-map=${_from}/=${new}")
      endif()
    endforeach()
  endforeach()
  list(REMOVE_DUPLICATES _flags)
  set(${out} ${_flags} PARENT_SCOPE)
endfunction()
