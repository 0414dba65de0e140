# Writes OUT: one `{"weft_runtime/<name>", R"weftpy(<text>)weftpy"},` entry
# per file of FILES (paths joined by "|"), read by RuntimeFiles.cpp.
string(REPLACE "|" ";" FILES "${FILES}")
set(text "// Generated from python/weft_runtime by EmbedRuntime.cmake.\n")
foreach(f ${FILES})
  get_filename_component(name ${f} NAME)
  file(READ ${f} body)
  string(APPEND text "{\"weft_runtime/${name}\", R\"weftpy(${body})weftpy\"},\n")
endforeach()
file(WRITE ${OUT}.tmp "${text}")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different ${OUT}.tmp ${OUT})
