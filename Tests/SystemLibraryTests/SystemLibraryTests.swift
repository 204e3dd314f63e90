import CCrypto
import CCurl
import CDeflate
import CLibXML2
import CSQLite3
import CSodium
import CZlib
import Testing

/// Each system library resolves through pkg-config and links: one real call into each.
@Suite struct SystemLibraryTests {
    @Test func curlReportsAVersion() {
        let info = curl_version_info(CURLVERSION_TENTH)
        #expect(info != nil)
        let handle = curl_easy_init()
        #expect(handle != nil)
        #expect(llvs_curl_easy_setopt_long(handle, CURLOPT_VERBOSE, 0) == CURLE_OK)
        curl_easy_cleanup(handle)
    }

    @Test func libxml2ParsesADocument() {
        let xml = "<a xmlns='DAV:'><b/></a>"
        let document = xml.withCString {
            xmlReadMemory($0, Int32(xml.utf8.count), nil, nil, Int32(XML_PARSE_NONET.rawValue))
        }
        #expect(document != nil)
        xmlFreeDoc(document)
    }

    @Test func sqliteOpensAnInMemoryDatabase() {
        var db: OpaquePointer?
        #expect(sqlite3_open(":memory:", &db) == SQLITE_OK)
        #expect(sqlite3_exec(db, "CREATE TABLE t(x)", nil, nil, nil) == SQLITE_OK)
        sqlite3_close(db)
    }

    @Test func libcryptoHashes() {
        var digest = [UInt8](repeating: 0, count: 32)
        let input: [UInt8] = Array("abc".utf8)
        _ = SHA256(input, input.count, &digest)
        #expect(digest.prefix(4) == [0xba, 0x78, 0x16, 0xbf])
    }

    @Test func zlibChecksums() {
        let input: [UInt8] = Array("123456789".utf8)
        #expect(crc32(0, input, uInt(input.count)) == 0xCBF43926)
    }

    @Test func libdeflateChecksumsAndRoundTrips() throws {
        let input: [UInt8] = Array("123456789".utf8)
        #expect(libdeflate_crc32(0, input, input.count) == 0xCBF43926)
        let text = [UInt8](repeating: UInt8(ascii: "a"), count: 1000)
        let compressor = try #require(libdeflate_alloc_compressor(6))
        defer { libdeflate_free_compressor(compressor) }
        var compressed = [UInt8](repeating: 0, count: libdeflate_deflate_compress_bound(compressor, text.count))
        let size = libdeflate_deflate_compress(compressor, text, text.count, &compressed, compressed.count)
        #expect(size > 0 && size < 100)
        let decompressor = try #require(libdeflate_alloc_decompressor())
        defer { libdeflate_free_decompressor(decompressor) }
        var output = [UInt8](repeating: 0, count: text.count)
        var produced = 0
        #expect(
            libdeflate_deflate_decompress(decompressor, compressed, size, &output, output.count, &produced)
                == LIBDEFLATE_SUCCESS)
        #expect(produced == text.count && output == text)
    }

    @Test func sodiumInitialisesAndHashes() {
        #expect(sodium_init() >= 0)
        var digest = [UInt8](repeating: 0, count: 32)
        let input: [UInt8] = Array("abc".utf8)
        #expect(crypto_generichash(&digest, 32, input, UInt64(input.count), nil, 0) == 0)
        // BLAKE2b-256("abc"), RFC 7693's test vector family.
        #expect(digest.prefix(4) == [0xbd, 0xdd, 0x81, 0x3c])
    }
}
