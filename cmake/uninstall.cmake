# cmake -DMANIFEST=FILE -P uninstall.cmake (`make uninstall`, or the
# `uninstall` target): remove every file the last `cmake --install` of this
# build tree put, as its install_manifest.txt lists them (the libraries,
# headers, .pc files, CMake package, the command, its man pages and
# completion scripts), under $DESTDIR when set; then the directories that
# only lanes fills, once empty; and, as the install did, run ldconfig when
# root, without DESTDIR, after removing libraries from a system directory.
if(NOT EXISTS "${MANIFEST}")
  message(FATAL_ERROR "no ${MANIFEST}: nothing was installed from this build tree "
                      "(or it was uninstalled already)")
endif()
file(STRINGS "${MANIFEST}" ln_files)
set(ln_destdir "$ENV{DESTDIR}")
set(ln_dirs "")
set(ln_libs "")
set(ln_found 0)
foreach(f IN LISTS ln_files)
  set(path "${ln_destdir}${f}")
  if(EXISTS "${path}" OR IS_SYMLINK "${path}")
    set(ln_found 1)
    message(STATUS "Removing: ${path}")
    file(REMOVE "${path}")
    if(EXISTS "${path}" OR IS_SYMLINK "${path}")
      message(FATAL_ERROR "could not remove ${path}")
    endif()
  else()
    message(STATUS "Not there: ${path}")
  endif()
  get_filename_component(dir "${path}" DIRECTORY)
  get_filename_component(name "${path}" NAME)
  # lanes' own directories: include/lanes, lib/cmake/lanes
  if(dir MATCHES "/include/lanes$" OR dir MATCHES "/cmake/lanes$")
    list(APPEND ln_dirs "${dir}")
  endif()
  if(name MATCHES "^liblanes.*\\.so")
    list(APPEND ln_libs "${path}")
  endif()
endforeach()
list(REMOVE_DUPLICATES ln_dirs)
foreach(dir IN LISTS ln_dirs)
  execute_process(COMMAND rmdir "${dir}" ERROR_QUIET) # only when empty
endforeach()
# The install ran ldconfig for a system library directory (CMakeLists.txt);
# the uninstall runs it when the loader's cache still names a library it
# removed, so the cache forgets them.
set(ln_cached 0)
find_program(ln_ldconfig ldconfig PATHS /sbin /usr/sbin)
if(ln_libs AND ln_destdir STREQUAL "" AND ln_ldconfig)
  execute_process(COMMAND "${ln_ldconfig}" -p OUTPUT_VARIABLE ln_cache ERROR_QUIET)
  foreach(lib IN LISTS ln_libs)
    string(FIND "${ln_cache}" "=> ${lib}\n" at)
    if(at GREATER -1)
      set(ln_cached 1)
    endif()
  endforeach()
endif()
if(ln_cached)
  execute_process(COMMAND id -u OUTPUT_VARIABLE ln_uid OUTPUT_STRIP_TRAILING_WHITESPACE
                  ERROR_QUIET)
  if(ln_uid STREQUAL "0")
    message(STATUS "Running: ${ln_ldconfig} (its cache named the removed libraries)")
    execute_process(COMMAND "${ln_ldconfig}")
  else()
    message(STATUS "the loader's cache still names the removed libraries: run ldconfig as root")
  endif()
endif()
# A manifest none of whose files was there (another DESTDIR than the
# install's?) is kept: removing it would lose the only record of them.
if(NOT ln_found AND ln_files)
  message(FATAL_ERROR "none of the files ${MANIFEST} lists is there (was it installed with "
                      "another DESTDIR than '${ln_destdir}'?): kept it, removed nothing")
endif()
file(REMOVE "${MANIFEST}")
