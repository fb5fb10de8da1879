# `make install` (PREFIX, DESTDIR) and `make package` (a .deb through CPack): the binary,
# joulestat(8), the systemd unit, the default options file it reads, the SLURM epilog
# (<prefix>/lib/joulestat/joulestat-slurm-epilog, docs/SLURM.md), the docs. The
# simulated GPU node (component "sim") only when asked: -DJOULESTAT_INSTALL_SIM=ON, or
# `cmake --install BUILD --component sim`; it goes to a directory of its own, so that it
# never stands in for the real libnvidia-ml.so.1.
option(JOULESTAT_INSTALL_SIM "Install the simulated GPU node and its scenarios" OFF)

# Empty: below the prefix of this configuration (a cached path would keep the first
# prefix: `make install PREFIX=...` after `make demo` put the unit in /usr/local).
set(JOULESTAT_SYSTEMD_UNIT_DIR "" CACHE PATH
    "Where the systemd unit goes (default <prefix>/lib/systemd/system; systemd also reads /usr/local/lib/systemd/system)")
if(JOULESTAT_SYSTEMD_UNIT_DIR)
  set(_unit_dir "${JOULESTAT_SYSTEMD_UNIT_DIR}")
else()
  set(_unit_dir "${CMAKE_INSTALL_PREFIX}/lib/systemd/system")
endif()
set(_defaults_file "${CMAKE_INSTALL_FULL_SYSCONFDIR}/default/joulestat")
set(_sim_dir "${CMAKE_INSTALL_FULL_LIBDIR}/joulestat")
# The man page names the options file; replay finds an installed simulator.
target_compile_definitions(js_daemon PRIVATE JOULESTAT_SYSCONFDIR="${CMAKE_INSTALL_FULL_SYSCONFDIR}"
                           JOULESTAT_DOCDIR="${CMAKE_INSTALL_FULL_DOCDIR}"
                           JOULESTAT_SIM_LIBRARY="${_sim_dir}/libnvidia-ml.so.1")

# joulestat(8), written by the binary from the table that also prints --help.
set(_man ${CMAKE_BINARY_DIR}/joulestat.8)
add_custom_command(OUTPUT ${_man}
                   COMMAND sh -c "\"$0\" --help-man >\"$1\"" $<TARGET_FILE:joulestat> ${_man}
                   DEPENDS joulestat VERBATIM)
add_custom_target(joulestat-man ALL DEPENDS ${_man})

# The unit names the installed paths.
set(_unit_src ${CMAKE_SOURCE_DIR}/deploy/systemd/joulestat.service)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_unit_src})
file(READ ${_unit_src} _unit)
string(REPLACE "/usr/local/bin/joulestat" "${CMAKE_INSTALL_FULL_BINDIR}/joulestat" _unit "${_unit}")
string(REPLACE "/etc/default/joulestat" "${_defaults_file}" _unit "${_unit}")
file(CONFIGURE OUTPUT ${CMAKE_BINARY_DIR}/joulestat.service CONTENT "${_unit}" @ONLY)

install(TARGETS joulestat RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${_man} DESTINATION ${CMAKE_INSTALL_MANDIR}/man8)
install(FILES ${CMAKE_BINARY_DIR}/joulestat.service DESTINATION ${_unit_dir})
install(FILES ${CMAKE_SOURCE_DIR}/deploy/systemd/joulestat.default
        DESTINATION ${CMAKE_INSTALL_FULL_SYSCONFDIR}/default RENAME joulestat)
install(PROGRAMS ${CMAKE_SOURCE_DIR}/deploy/slurm/joulestat-slurm-epilog
        DESTINATION ${CMAKE_INSTALL_PREFIX}/lib/joulestat)
install(FILES ${CMAKE_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}
        FILES_MATCHING PATTERN "*.md")
if(JOULESTAT_INSTALL_SIM)
  set(_sim_asked "")
else()
  set(_sim_asked EXCLUDE_FROM_ALL)
endif()
install(TARGETS joulestat_sim_nvml LIBRARY DESTINATION ${_sim_dir} NAMELINK_SKIP COMPONENT sim
        ${_sim_asked})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/scenarios/
        DESTINATION ${CMAKE_INSTALL_DATADIR}/joulestat/scenarios COMPONENT sim ${_sim_asked})

# The .deb: dependencies from dpkg-shlibdeps, which sees only the libraries the binary links;
# those it dlopen()s are named here.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME joulestat)
set(CPACK_PACKAGE_VENDOR joulestat)
set(CPACK_PACKAGE_CONTACT "joulestat developers <joulestat@invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "GPU and CPU energy per process, container, pod and SLURM job, for Prometheus")
set(CPACK_PACKAGE_DESCRIPTION
    "joulestat reads NVML and RAPL energy counters and splits every joule exactly among the \
processes that used the device, and through them among containers, Kubernetes pods and \
SLURM jobs, exported as Prometheus counters.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# dlopen()ed when needed, so dpkg-shlibdeps does not see them; merged with the ones it finds:
# ncursesw (and through it libtinfo6) by `joulestat top`, libseccomp2 while the system-call
# filter is built, libyaml-0-2 and libcrypt1 to read --web.config.file and check its
# passwords (without them a configured server does not start).
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libncursesw6 (>= 6), libseccomp2, libyaml-0-2, libcrypt1")
# libcurl4 and libjansson4 for the API server's pod names; libbpf1 for the eBPF task
# iterator: all dlopen()ed and optional (the daemon runs on without them, and says so).
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libcurl4, libjansson4, libbpf1")
set(CPACK_STRIP_FILES ON)
# The options file is the administrator's: dpkg keeps their edits on upgrade.
file(CONFIGURE OUTPUT ${CMAKE_BINARY_DIR}/deb/conffiles CONTENT "${_defaults_file}\n")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${CMAKE_BINARY_DIR}/deb/conffiles)
include(CPack)
