# Build-enforced layers. Each library target exposes only its own headers, under the same
# spelling as in the source tree ("config/config.h"), through a directory of symbolic links
# in the build tree: build/layer_include/<layer>/. A target sees a layer's headers only when
# it links that layer, so an include the layer table forbids fails to compile instead of
# silently working through a shared "-I src".
#
# Every layer is a folder of src/ (no file sits at the top of src/, so no file finds another
# layer's headers by relative path). test/layers/check_layers.py checks every edge against the
# table in docs/ARCHITECTURE.md too, including those the compiler cannot see (the transitive
# ones through PUBLIC links).
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
