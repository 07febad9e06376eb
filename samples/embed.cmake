# Writes OUTPUT, a C++ file that holds INPUT's bytes as the NUL-terminated
# array SYMBOL (so a sample carries its PTX without reading files).
file(READ "${INPUT}" hex HEX)
string(REGEX REPLACE "(..)" "0x\\1," bytes "${hex}")
file(WRITE "${OUTPUT}" "// Generated from ${INPUT}.\nextern const char ${SYMBOL}[] = {${bytes}0x00};\n")
