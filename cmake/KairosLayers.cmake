# Build-enforced layers. Each library target exposes only its own headers, under the same
# spelling as in the source tree ("config/config.h"), through a directory of symbolic links
# in the build tree: build/layer_include/<layer>/. A target sees a layer's headers only when
# it links that layer, so an include the layer table forbids fails to compile instead of
# silently working through a shared "-I src".
#
# One gap remains, by the rules of quoted includes: a file directly in src/ (layer base) finds
# "config/config.h" next to itself. test/layers/check_layers.py checks every edge, that one
# included, against the table in docs/ARCHITECTURE.md.
set(KAIROS_LAYER_INCLUDE_ROOT ${PROJECT_BINARY_DIR}/layer_include)

# kairos_layer_folder(<target> <folder>): <target> owns src/<folder>/ and exposes it as
# "<folder>/...".
function(kairos_layer_folder target folder)
  set(dir ${KAIROS_LAYER_INCLUDE_ROOT}/${folder})
  file(MAKE_DIRECTORY ${dir})
  if(NOT EXISTS ${dir}/${folder})
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/src/${folder} ${dir}/${folder} SYMBOLIC)
  endif()
  target_include_directories(${target} PUBLIC $<BUILD_INTERFACE:${dir}>)
endfunction()

# kairos_layer_base(<target>): the headers directly in src/, exposed by their bare names.
function(kairos_layer_base target)
  set(dir ${KAIROS_LAYER_INCLUDE_ROOT}/base)
  file(MAKE_DIRECTORY ${dir})
  file(GLOB headers CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/*.h)
  foreach(h ${headers})
    get_filename_component(n ${h} NAME)
    if(NOT EXISTS ${dir}/${n})
      file(CREATE_LINK ${h} ${dir}/${n} SYMBOLIC)
    endif()
  endforeach()
  target_include_directories(${target} PUBLIC $<BUILD_INTERFACE:${dir}>)
endfunction()
