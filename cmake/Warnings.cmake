include(CheckCCompilerFlag)

set(_joulestat_warning_candidates
  -Wall -Wextra -Wformat=2 -Wformat-signedness -Wshadow -Wstrict-prototypes
  -Wmissing-prototypes -Wmissing-declarations -Wold-style-definition -Wpointer-arith
  -Wcast-qual -Wwrite-strings -Wundef -Wfloat-equal -Winit-self -Wredundant-decls
  -Wnull-dereference -Wimplicit-fallthrough -Wvla -Wdouble-promotion
  -Wlogical-op -Wduplicated-cond -Wduplicated-branches
  -Werror=implicit-function-declaration -Werror=incompatible-pointer-types
  -Werror=int-conversion -Werror=return-type
  -Wno-unused-parameter -Wno-missing-field-initializers)

set(JOULESTAT_WARNINGS "")
foreach(flag IN LISTS _joulestat_warning_candidates)
  string(MAKE_C_IDENTIFIER "HAVE_FLAG${flag}" var)
  check_c_compiler_flag(${flag} ${var})
  if(${var})
    list(APPEND JOULESTAT_WARNINGS ${flag})
  endif()
endforeach()
if(JOULESTAT_WERROR)
  list(APPEND JOULESTAT_WARNINGS -Werror)
endif()

# Counter arithmetic and parsers: silent truncation is where it would hurt most.
set(JOULESTAT_STRICT_WARNINGS -Wconversion -Wsign-conversion)

function(joulestat_warnings target)
  target_compile_options(${target} PRIVATE ${JOULESTAT_WARNINGS})
endfunction()

function(joulestat_strict_warnings target)
  target_compile_options(${target} PRIVATE ${JOULESTAT_WARNINGS} ${JOULESTAT_STRICT_WARNINGS})
endfunction()

# One static library per source folder, from every .c in it. A folder without sources yet
# becomes an interface library so the dependency graph stays the same.
function(joulestat_library name)
  cmake_parse_arguments(ARG "STRICT" "" "DEPS" ${ARGN})
  file(GLOB _src CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.c)
  if(_src)
    add_library(${name} STATIC ${_src})
    target_include_directories(${name} PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
    target_link_libraries(${name} PUBLIC ${ARG_DEPS})
    set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
    if(ARG_STRICT)
      joulestat_strict_warnings(${name})
    else()
      joulestat_warnings(${name})
    endif()
  else()
    add_library(${name} INTERFACE)
    target_include_directories(${name} INTERFACE ${CMAKE_CURRENT_SOURCE_DIR})
    target_link_libraries(${name} INTERFACE ${ARG_DEPS})
  endif()
endfunction()
