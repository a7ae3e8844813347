# `cmake --install` and the Debian package (CPack). Layout under the prefix, found by spacectl
# relative to its own executable (controller/install_paths.h), so nothing is compiled in:
#   bin/spacectl, bin/gatekeeper                     the controller; the appliance for `explain`
#   libexec/gatekeeper-spaces/escape-suite           copied into spaces by `spacectl escape-test`
#   libexec/gatekeeper-spaces/spacectl-bridge        copied into spaces by Place::connect (dispatcher)
#   share/gatekeeper-spaces/{gatekeeper,space}-image.{id,tar}   pins and the archives they pin
#   share/gatekeeper-spaces/seccomp/{space,gatekeeper}.json     the profiles
#   share/doc/gatekeeper-spaces/                     README, SECURITY, docs/, licences
#   share/man/man1/, bash and zsh completion         (docs/man/, controller/completions/)
#   lib/systemd/{system,user}/spacectl.{service,socket}  `spacectl serve` as a service (controller/systemd/)
# Sanitizer and fuzz builds install nothing (their binaries are not what ships).
if(GK_SANITIZE OR GK_FUZZ)
  return()
endif()

set(GK_DATA_DEST share/gatekeeper-spaces)
set(GK_LIBEXEC_DEST libexec/gatekeeper-spaces)
set(GK_DOC_DEST share/doc/gatekeeper-spaces)

install(TARGETS spacectl gatekeeper RUNTIME DESTINATION bin)
install(TARGETS escape-suite spacectl-bridge RUNTIME DESTINATION ${GK_LIBEXEC_DEST})
install(FILES seccomp-profiles/space.json seccomp-profiles/gatekeeper.json DESTINATION ${GK_DATA_DEST}/seccomp)
foreach(_pair "gatekeeper;gatekeeper-image" "space-default;space-image")
  list(GET _pair 0 _from)
  list(GET _pair 1 _to)
  install(FILES ${GK_PACKAGE_IMAGES}/${_from}.id DESTINATION ${GK_DATA_DEST} RENAME ${_to}.id)
  install(FILES ${GK_PACKAGE_IMAGES}/${_from}.tar DESTINATION ${GK_DATA_DEST} RENAME ${_to}.tar)
endforeach()
install(FILES README.md SECURITY.md DESTINATION ${GK_DOC_DEST})
install(FILES docs/README.md docs/architecture.md docs/decisions.md docs/reference-behaviour.md
        DESTINATION ${GK_DOC_DEST}/docs)
install(FILES docs/man/spacectl.1 docs/man/gatekeeper.1 docs/man/escape-suite.1 DESTINATION share/man/man1)
install(FILES controller/completions/spacectl.bash DESTINATION share/bash-completion/completions RENAME spacectl)
install(FILES controller/completions/_spacectl DESTINATION share/zsh/vendor-completions)
# `spacectl serve` as a service (controller/systemd/README.md): the system units and the user units,
# where systemd looks for a package's units (lib/systemd/{system,user} under the prefix).
install(FILES controller/systemd/spacectl.service controller/systemd/spacectl.socket DESTINATION lib/systemd/system)
install(FILES controller/systemd/user/spacectl.service controller/systemd/user/spacectl.socket DESTINATION lib/systemd/user)
# Licences of what the binaries and images carry: the Debian copyright files of the sources we
# compile in (libuv, c-ares, libseccomp, llhttp) or ship (busybox, git and the libraries git loads
# in the space image, the CA bundle in both images), and BoringSSL's own LICENSE.
install(FILES ${CMAKE_SOURCE_DIR}/docs/COPYRIGHT.md DESTINATION ${GK_DOC_DEST})
foreach(_pkg libuv1-dev libc-ares-dev libseccomp-dev node-llhttp busybox-static ca-certificates
             git libc6 libpcre2-8-0 zlib1g)
  install(FILES /usr/share/doc/${_pkg}/copyright DESTINATION ${GK_DOC_DEST}/licenses RENAME ${_pkg}.copyright)
endforeach()
file(GLOB _bssl_license ${GK_DEPS_DIR}/src/android-platform-external-boringssl-*/src/LICENSE)
if(_bssl_license)
  list(GET _bssl_license 0 _bssl_license)
  install(FILES ${_bssl_license} DESTINATION ${GK_DOC_DEST}/licenses RENAME boringssl.LICENSE)
endif()

# ---- Debian package: cmake --build --preset release --target package ----
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME gatekeeper-spaces)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_PACKAGE_CONTACT "gatekeeper spaces maintainers <maintainers@gatekeeper-spaces.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "isolated spaces for AI coding agents behind a gatekeeper appliance")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "spacectl creates hardened containers (spaces) on a local Docker engine, each behind its own\ngatekeeper appliance that lets through only TLS to allowed names and requests to which it adds\na credential the agent never sees. Includes the escape suite that proves from inside a live\nspace that the agent cannot get out, and the pinned gatekeeper and space images.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
# Library dependencies from the binaries (dpkg-shlibdeps, in dpkg-dev); the Docker CLI spacectl
# drives: Debian's docker.io, or Docker's own packages.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "docker.io | docker-ce-cli")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "bash-completion")
# `spacectl image push` pushes the pinned images with skopeo; nothing else needs it.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "skopeo")
set(CPACK_STRIP_FILES ON)
include(CPack)
