import CCrypto
import CCurl
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
        let document = xml.withCString { xmlReadMemory($0, Int32(xml.utf8.count), nil, nil, Int32(XML_PARSE_NONET.rawValue)) }
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

    @Test func sodiumInitialisesAndHashes() {
        #expect(sodium_init() >= 0)
        var digest = [UInt8](repeating: 0, count: 32)
        let input: [UInt8] = Array("abc".utf8)
        #expect(crypto_generichash(&digest, 32, input, UInt64(input.count), nil, 0) == 0)
        // BLAKE2b-256("abc"), RFC 7693's test vector family.
        #expect(digest.prefix(4) == [0xbd, 0xdd, 0x81, 0x3c])
    }
}
