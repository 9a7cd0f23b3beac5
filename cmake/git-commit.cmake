# cmake -DSRC=DIR -DOUT=FILE -P git-commit.cmake: write FILE, a C header
# defining CLI_GIT_COMMIT, the commit of the checkout at DIR ("1a2b3c4d5e6f",
# "-dirty" appended when tracked files differ from it) or "unknown" when DIR
# is not the top of a git checkout (a release tarball) or git is missing.
# Run at every build (cli/CMakeLists.txt); FILE is rewritten only when the
# commit changed, so an unchanged tree recompiles nothing.
set(commit unknown)
find_program(LN_GIT git)
if(LN_GIT)
  execute_process(COMMAND ${LN_GIT} -C ${SRC} rev-parse --show-toplevel
                  OUTPUT_VARIABLE top OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE rc ERROR_QUIET)
  if(rc EQUAL 0)
    get_filename_component(top "${top}" REALPATH)
    get_filename_component(src_real "${SRC}" REALPATH)
  endif()
  if(rc EQUAL 0 AND top STREQUAL src_real)
    execute_process(COMMAND ${LN_GIT} -C ${SRC} describe --always --abbrev=12
                            --exclude=* --dirty=-dirty
                    OUTPUT_VARIABLE out OUTPUT_STRIP_TRAILING_WHITESPACE
                    RESULT_VARIABLE rc ERROR_QUIET)
    if(rc EQUAL 0 AND out MATCHES "^[0-9a-f]+(-dirty)?$")
      set(commit "${out}")
    endif()
  endif()
endif()
set(text "/* Written by cmake/git-commit.cmake at build time. */\n#define CLI_GIT_COMMIT \"${commit}\"\n")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
else()
  set(old "")
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
